/// Scheduled backups (`kindling serve --backup-dir DIR --backup-every 1h --backup-keep 48`):
/// every interval, every namespace holding data is written to `directory` as the hosted
/// service's backups are (`BackupFileName`), so a backup restores into Kindling
/// (`kindling restore --from`) or into the hosted service. The only durable copy of an
/// `--in-memory` server's data, and a copy outside the data directory otherwise.
public struct BackupConfiguration: Sendable, Equatable {
    /// Where backups go (created at start when missing).
    public var directory: String
    /// Time between backups.
    public var interval: Duration
    /// Backups kept per namespace; older ones are deleted after each new one.
    public var keep: Int

    /// Once a minute at most: a backup writes the whole tree, and more often would be a
    /// snapshot's job.
    public static let minimumInterval: Duration = .seconds(60)
    /// Thirty days at most.
    public static let maximumInterval: Duration = .seconds(30 * 86_400)
    public static let defaultInterval: Duration = .seconds(3600)
    public static let defaultKeep = 48
    public static let maximumKeep = 100_000

    public init(directory: String, interval: Duration = BackupConfiguration.defaultInterval, keep: Int = BackupConfiguration.defaultKeep) {
        self.directory = directory
        self.interval = interval
        self.keep = keep
    }

    /// Refuses settings out of their bounds (`kindling serve` checks its options the same way).
    public func validate() throws(BackupError) {
        guard !directory.isEmpty else { throw .invalidSettings("the backup directory is empty") }
        guard interval >= BackupConfiguration.minimumInterval, interval <= BackupConfiguration.maximumInterval else {
            throw .invalidSettings("the interval must be between 1 minute and 30 days")
        }
        guard (1...BackupConfiguration.maximumKeep).contains(keep) else {
            throw .invalidSettings("the number of backups kept must be between 1 and \(BackupConfiguration.maximumKeep)")
        }
    }

    /// Milliseconds in `interval`, for `BackupSchedule` (bounded by `validate`).
    var intervalMilliseconds: Int64 {
        let (seconds, attoseconds) = interval.components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? Int64.max : BackupSchedule.adding(milliseconds, attoseconds / 1_000_000_000_000_000)
    }
}
