/// What can go wrong with scheduled backups and with reading a backup back.
///
/// A small set: a backup that fails is logged and counted and the server keeps serving, so the
/// cases only have to say what an operator needs to act on.
public enum BackupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Backup settings out of their bounds (an interval under a minute, a keep count of 0).
    case invalidSettings(String)
    /// The backup directory cannot be created or written to.
    case unwritableDirectory(path: String, reason: String)
    /// Writing a backup failed (a full disk, a directory removed under the server).
    case io(String)
    /// A file to restore from that cannot be read, or is damaged (a truncated gzip stream).
    case unreadable(path: String, reason: String)
    /// The server began shutting down while a backup was being written; it was abandoned, and
    /// only its temporary file was there to remove.
    case stopped

    public var description: String {
        switch self {
        case .invalidSettings(let reason): "invalid backup settings: \(reason)"
        case .unwritableDirectory(let path, let reason): "cannot write backups to \(path): \(reason)"
        case .io(let reason): reason
        case .unreadable(let path, let reason): "cannot read the backup \(path): \(reason)"
        case .stopped: "the server is shutting down"
        }
    }
}
