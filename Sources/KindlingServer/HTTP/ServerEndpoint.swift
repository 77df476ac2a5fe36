/// The server's own HTTP endpoints, beside the data at `/<path>.json`.
enum ServerEndpoint: Sendable, Equatable {
    /// `GET /.inspect/databases.json`: the namespaces in use.
    case databases
    /// `GET`/`PUT /.settings/rules.json`: a namespace's security rules (admin only).
    case rules

    init?(uriPath: String) {
        switch uriPath {
        case "/.inspect/databases.json": self = .databases
        case "/.settings/rules.json": self = .rules
        default: return nil
        }
    }
}
