/// Holds back flushes asked for inside a read until the read ends, so the replies a connection
/// writes for one read cost one `writev` (the harness must not be what limits the server).
/// Shared by the realtime and Redis connections.
struct ReadBatchedFlush {
    private var reading = false
    private var pending = false

    /// A read began.
    mutating func readStarted() { reading = true }

    /// The read ended; true when a flush was held back and must happen now.
    mutating func readCompleted() -> Bool {
        reading = false
        defer { pending = false }
        return pending
    }

    /// A flush was asked for; true when it may happen now, false when it waits for the read's end.
    mutating func requested() -> Bool {
        if reading { pending = true }
        return !reading
    }
}
