/// Why a benchmark run could not go on.
public enum BenchError: Error, CustomStringConvertible, Sendable {
    /// A command-line value the harness cannot use.
    case invalidArgument(String)
    /// A server process (kindling or redis) did not start or stopped.
    case serverFailed(String)
    /// A connection ended while the scenario still needed it.
    case connectionClosed(String)
    /// The server answered something the scenario cannot go on from.
    case unexpectedReply(String)
    /// The scenario did not finish in time (the server stalled or dropped messages).
    case timedOut(String)

    public var description: String {
        switch self {
        case .invalidArgument(let message): message
        case .serverFailed(let message): "server failed: \(message)"
        case .connectionClosed(let message): "connection closed \(message)"
        case .unexpectedReply(let message): "unexpected reply: \(message)"
        case .timedOut(let message): "timed out: \(message)"
        }
    }
}
