import KindlingCore

/// What the namespace answers an operation with. Deliveries to listeners (the caller's own
/// included) are separate outputs and always go out before the answer.
enum Answer: Sendable {
    /// Done, nothing to return (listen, unlisten, onDisconnect registrations, auth).
    case ok
    /// The data read (`get`).
    case data(Node)
    /// An acknowledgement with data already encoded.
    case encoded([UInt8])
    /// A committed write: what it stored, and for a one-off request the location's data now
    /// (for its ETag; a realtime write is answered `ok` alone, so its hot path skips the lookup).
    case written(RESTWriteResult, location: Node?)
    /// The connection is now authenticated as this.
    case authenticated(AuthState)
    /// Nothing was changed, for this reason.
    case refused(Refusal)
}

/// Why the namespace refused an operation. Each case maps once to a wire status
/// (`Refusal+Wire`) and once to an HTTP status (`Refusal+HTTP`).
enum Refusal: Error, Sendable {
    /// The security rules do not allow it.
    case permissionDenied
    /// The path, data or query is not valid.
    case invalid(ValidationError)
    /// A transaction's hash no longer matches: nothing was written.
    case dataStale
    /// REST `if-match` failed; `current` is the data there now when the caller may read it.
    case preconditionFailed(current: Node?)
    /// Storage is failing, or the node cannot serve the write now; nothing was written and a
    /// retry is safe.
    case unavailable(String)
    /// A cluster node stopped leading the namespace before the log confirmed the write: it may
    /// or may not be stored, so a blind retry could make it twice (`Namespace.unconfirmed`).
    case unconfirmed
    /// The write would create a namespace over the server's cap (`maxNamespaces`).
    case namespaceLimit(String)
    /// A rules document that does not load (its path, line, column and what is wrong).
    case invalidRules(String)
    /// The connection is over one of its limits (listens, onDisconnect operations or bytes).
    case limitExceeded(String)
    /// The credential could not be verified.
    case invalidToken(String)
    /// The credential has expired.
    case expiredToken
}

extension Refusal {
    /// A credential the verifier refused.
    init(_ refusal: AuthRefusal) {
        switch refusal {
        case .invalidToken(let reason): self = .invalidToken(reason)
        case .expiredToken: self = .expiredToken
        }
    }
}
