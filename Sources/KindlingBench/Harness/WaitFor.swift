/// Polls until a count reaches its goal, failing when it stops moving for `stall` (the server
/// dropped something, or a connection died).
public enum WaitFor {
    public static func count(
        _ what: String,
        reaches goal: Int,
        stall: Duration = .seconds(20),
        poll: Duration = .milliseconds(5),
        _ current: @Sendable () -> Int
    ) async throws {
        var last = current()
        var lastChange = ContinuousClock.now
        while last < goal {
            try await Task.sleep(for: poll)
            let now = current()
            if now != last {
                last = now
                lastChange = .now
            } else if ContinuousClock.now - lastChange > stall {
                throw BenchError.timedOut("\(what): \(now) of \(goal) after no progress for \(stall)")
            }
        }
    }
}
