import NIOCore

/// Who may read `/.metrics`: any caller on the loopback interface (the operator's own machine,
/// or a Prometheus beside the server), else an admin credential only; the series name
/// namespaces, which other clients of a shared server need not learn.
enum MetricsAccess {
    /// Nil when `auth` calling from `remote` may read the metrics, else the refusal's status:
    /// 401 when no admin credential came, 403 for a valid credential that is not the admin.
    static func refusal(remote: SocketAddress?, auth: AuthState) -> (status: Int, message: String)? {
        if isLoopback(remote) || auth == .admin { return nil }
        if auth == .anonymous { return (401, "Metrics are served on loopback, or to an admin credential") }
        return (403, "Metrics are served on loopback, or to an admin credential")
    }

    /// True for 127.0.0.0/8, ::1 and IPv4-mapped loopback (`::ffff:127.x.y.z`), and for a
    /// Unix domain socket (only local processes reach one).
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .v4?:
            return address?.ipAddress?.hasPrefix("127.") == true
        case .v6?:
            guard let text = address?.ipAddress?.lowercased() else { return false }
            return text == "::1" || text.hasPrefix("::ffff:127.")
        case .unixDomainSocket?:
            return true
        case nil:
            return false
        }
    }
}
