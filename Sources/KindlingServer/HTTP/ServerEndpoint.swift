/// The server's own HTTP endpoints, beside the data at `/<path>.json`.
enum ServerEndpoint: Sendable, Equatable {
    /// `GET /.inspect/databases.json`: the namespaces in use.
    case databases
    /// `GET`/`PUT /.settings/rules.json`: a namespace's security rules (admin only).
    case rules
    /// `GET /.metrics`: the server's metrics in the Prometheus text format (loopback or admin).
    case metrics

    init?(uriPath: String) {
        switch uriPath {
        case "/.inspect/databases.json": self = .databases
        case "/.settings/rules.json": self = .rules
        case "/.metrics": self = .metrics
        default: return nil
        }
    }
}
