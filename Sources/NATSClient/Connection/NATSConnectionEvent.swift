/// A change in the connection, so callers can react: a lease holder stops acting as leader while
/// disconnected, an ordered consumer recreates itself after a reconnect.
public enum NATSConnectionEvent: Sendable, Hashable {
    /// The first connection is up.
    case connected(NATSServerAddress)
    /// The connection was lost; the client is trying the servers again.
    case disconnected
    /// A new connection is up and every live subscription was sent again.
    case reconnected(NATSServerAddress)
    /// The client is closed for good.
    case closed
}
