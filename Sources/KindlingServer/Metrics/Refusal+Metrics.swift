extension Refusal {
    /// The refusal's kind, for log lines.
    var kindName: String {
        switch self {
        case .permissionDenied: "permission_denied"
        case .invalid: "invalid"
        case .dataStale: "datastale"
        case .preconditionFailed: "precondition_failed"
        case .unavailable: "unavailable"
        case .unconfirmed: "unconfirmed"
        case .namespaceLimit: "namespace_limit"
        case .invalidRules: "invalid_rules"
        case .limitExceeded: "limit_exceeded"
        case .invalidToken: "invalid_token"
        case .expiredToken: "expired_token"
        }
    }
}
