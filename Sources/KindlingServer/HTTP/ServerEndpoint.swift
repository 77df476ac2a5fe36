/// The server's own HTTP endpoints, beside the data at `/<path>.json`.
enum ServerEndpoint: Sendable, Equatable {
    /// `GET /.inspect/databases.json`: the namespaces in use.
    case databases
    /// `POST /.settings/rules/simulate.json`: one read or write tried against the rules as a
    /// chosen `auth`, with the rule that decided (admin only; the console's simulator).
    case rulesSimulation
    /// `GET`/`PUT /.settings/rules.json`: a namespace's security rules (admin only).
    case rules
    /// `GET /.metrics`: the server's metrics in the Prometheus text format (loopback or admin).
    case metrics
    /// `GET /.settings/profile.json` with `Accept: text/event-stream`: a record of every
    /// operation, as `firebase database:profile` reads them (admin only).
    case profile
    /// `GET /.inspect/coverage.json` (and `DELETE`, which resets it) or `GET /.inspect/coverage`
    /// (a page): a namespace's rules coverage (admin, or anyone in emulator mode).
    case rulesCoverage(RulesCoverageReport.Format)

    init?(uriPath: String) {
        switch uriPath {
        case "/.inspect/databases.json": self = .databases
        case "/.settings/rules/simulate.json": self = .rulesSimulation
        case "/.settings/rules.json": self = .rules
        case "/.metrics": self = .metrics
        case "/.settings/profile.json": self = .profile
        case "/.inspect/coverage.json": self = .rulesCoverage(.json)
        case "/.inspect/coverage": self = .rulesCoverage(.html)
        default: return nil
        }
    }
}
