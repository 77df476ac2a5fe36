import NIOCore

/// Who may read `/.metrics`: any caller on the loopback interface (the operator's own machine,
/// or a Prometheus beside the server), else an admin credential only; the series name
/// namespaces, which other clients of a shared server need not learn. A request relayed by a
/// proxy (it carries `Forwarded`, `X-Forwarded-For` or `X-Real-IP`) comes from whoever the
/// proxy serves, so it is not taken for a local one even when the proxy connects over loopback.
enum MetricsAccess {
    /// The headers a reverse proxy adds to say whom it relays.
    static let proxyHeaders = ["forwarded", "x-forwarded-for", "x-real-ip"]

    /// Nil when `auth` calling from `remote` may read the metrics, else the refusal's status:
    /// 401 when no admin credential came, 403 for a valid credential that is not the admin.
    /// `relayed`: the request came through a proxy (see `proxyHeaders`).
    static func refusal(remote: SocketAddress?, relayed: Bool, auth: AuthState) -> (status: Int, message: String)? {
        if (isLoopback(remote) && !relayed) || auth == .admin { return nil }
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
