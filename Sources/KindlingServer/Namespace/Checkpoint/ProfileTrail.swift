/// What the checkpoint notes while a profiler listens (`NamespaceState.profiling`; nil, and
/// nothing noted, otherwise): a record of each operation it decides and of each write's
/// broadcast to its listeners, in order.
struct ProfileTrail: Sendable {
    /// Nanoseconds on a monotonic clock, the shell's (`ProfileClock`): the state reads no clock
    /// of its own, and a test can give it one it controls.
    let clock: @Sendable () -> UInt64
    /// The records since the shell last took them.
    var records: [ProfileRecord] = []

    init(clock: @escaping @Sendable () -> UInt64) {
        self.clock = clock
    }
}
