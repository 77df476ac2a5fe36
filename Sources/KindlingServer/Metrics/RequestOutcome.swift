/// How the namespace answered a request, the `outcome` label of `kindling_requests_total`.
enum RequestOutcome: Int, Sendable, CaseIterable {
    case ok
    /// A transaction's hash or a REST `if-match` no longer matched: nothing was written.
    case datastale
    /// The security rules refused it.
    case permissionDenied
    /// Any other refusal: invalid data, limits, failing storage, a refused credential.
    case error

    var label: String {
        switch self {
        case .ok: "ok"
        case .datastale: "datastale"
        case .permissionDenied: "permission_denied"
        case .error: "error"
        }
    }

    init(_ refusal: Refusal?) {
        switch refusal {
        case nil: self = .ok
        case .permissionDenied?: self = .permissionDenied
        case .dataStale?, .preconditionFailed?: self = .datastale
        default: self = .error
        }
    }
}
