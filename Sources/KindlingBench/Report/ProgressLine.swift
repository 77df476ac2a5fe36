import Foundation

/// The line on standard error that shows a run is alive: elapsed time, the current rate and the
/// total so far, rewritten in place about once a second.
public struct ProgressLine: Sendable {
    public let label: String
    public let unit: String
    public let enabled: Bool

    public init(label: String, unit: String, enabled: Bool) {
        self.label = label
        self.unit = unit
        self.enabled = enabled
    }

    /// Shows progress while `body` runs, reading the total from `count`.
    public func show<Result: Sendable>(
        count: @escaping @Sendable () -> Int,
        while body: () async throws -> Result
    ) async throws -> Result {
        guard enabled else { return try await body() }
        let ticker = Task { [label, unit] in
            let start = ContinuousClock.now
            var last = (at: start, count: count())
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if Task.isCancelled { break }
                let now = (at: ContinuousClock.now, count: count())
                let rate = Double(now.count - last.count) / (now.at - last.at).seconds
                let line =
                    "\r[\(label)] \(String(format: "%5.1f", (now.at - start).seconds)) s  \(ReportTable.format(rate)) \(unit)/s  total \(ReportTable.format(Double(now.count)))   "
                FileHandle.standardError.write(Data(line.utf8))
                last = now
            }
        }
        let result: Result
        do {
            result = try await body()
        } catch {
            ticker.cancel()
            await ticker.value
            FileHandle.standardError.write(Data("\n".utf8))
            throw error
        }
        ticker.cancel()
        await ticker.value
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        return result
    }
}
