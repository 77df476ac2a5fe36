/// Lets at most `limit` log lines of one kind through per second and counts the rest, so a
/// client flooding refused requests costs a bounded number of lines, and the next line that
/// gets through says how many were left out. A value, confined to its owner.
struct LinesPerSecond: Sendable {
    let limit: Int
    private var windowStart = ContinuousClock.now
    private var used = 0
    private var skipped = 0

    init(limit: Int) { self.limit = limit }

    /// Counts `count` lines left out without asking.
    mutating func skip(_ count: Int) { skipped += count }

    /// Nil when the line must be left out; else how many were left out before it.
    mutating func take() -> Int? {
        let now = ContinuousClock.now
        if now - windowStart >= .seconds(1) {
            windowStart = now
            used = 0
        }
        guard used < limit else {
            skipped += 1
            return nil
        }
        used += 1
        defer { skipped = 0 }
        return skipped
    }
}
