import NIOPosix

/// What every connection of one server shares besides the namespaces: the budget for
/// unfinished requests, the idle HTTP connections that may be shed, the browser policy and the
/// threads that parse and render large REST bodies away from the event loops.
struct ServerResources: Sendable {
    let budget: InFlightBudget
    /// The bytes waiting for realtime readers that fell behind, server-wide.
    let backlogBudget: InFlightBudget
    let idle: IdleConnections
    /// Connections over the limit, being answered 503.
    let overLimit: OverLimitConnections
    /// The connection limit (`--max-connections`, or what the descriptors allow).
    let maxConnections: Int
    let policy: BrowserAccessPolicy
    let workers: NIOThreadPool
    /// Verifies the credentials every transport receives.
    let verifier: CredentialVerifier
    /// The server's own metrics registry (see `ServerMetrics` for why it is not the global one).
    let metrics: ServerMetrics
    /// Readiness: storage taking writes, shutdown not begun.
    let health: ServerHealth
    /// Each event loop's outbox, inbox and idle sweep, shared by its realtime sessions.
    let perEventLoop: PerEventLoop
    /// The long-polling sessions (`/.lp`).
    let longPolls: LongPollSessions
}
