/// Why the past could not be read or restored.
public enum HistoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The instant is older than anything the history keeps; `earliest` is the oldest instant it
    /// can rebuild (milliseconds since 1970), nil when it keeps nothing.
    case beforeHistory(earliest: Int64?)
    /// A log record is missing between two the history has (a damaged or hand-edited data
    /// directory): no tree past it would be right.
    case gap(after: UInt64)
    /// The files could not be read.
    case storage(String)
    /// The namespace keeps no history here (in memory, or with `--history off`).
    case unavailable(String)
    /// The server stopped while the past was read.
    case shuttingDown

    public var description: String {
        switch self {
        case .beforeHistory(let earliest?):
            "that instant is before the kept history, which starts at \(HistoryTime.iso8601(earliest)) (\(earliest) ms)"
        case .beforeHistory(nil): "no history is kept for this namespace"
        case .gap(let sequence): "the history is missing the write after sequence \(sequence); it cannot be rebuilt past it"
        case .storage(let reason): "cannot read the history: \(reason)"
        case .unavailable(let reason): reason
        case .shuttingDown: "the server is shutting down"
        }
    }
}
