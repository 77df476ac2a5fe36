import NIOPosix

/// What every connection of one server shares besides the namespaces: the budget for
/// unfinished requests, the idle HTTP connections that may be shed, the browser policy and the
/// threads that parse and render large REST bodies away from the event loops.
struct ServerResources: Sendable {
    let budget: InFlightBudget
    let idle: IdleConnections
    let policy: BrowserAccessPolicy
    let workers: NIOThreadPool
    /// Verifies the credentials every transport receives.
    let verifier: CredentialVerifier
}
