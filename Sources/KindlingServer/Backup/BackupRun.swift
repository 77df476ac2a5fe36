/// What one backup of every namespace did: what an operator's or a test's `backUpNow` learns
/// (the scheduled ones are logged and counted instead).
public struct BackupRun: Sendable, Equatable {
    /// The data file written for each namespace backed up.
    public var written: [String: String] = [:]
    /// Why each namespace whose backup failed failed (its files are left as they were).
    public var failed: [String: String] = [:]
    /// Namespaces left out because they hold no data.
    public var skipped: [String] = []

    public init() {}
}
