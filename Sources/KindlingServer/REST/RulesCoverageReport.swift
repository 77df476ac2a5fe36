import KindlingCore

/// A namespace's rules coverage as its endpoints answer it: the rules text in force and what
/// each of its expressions did, taken from the namespace's queue and rendered off it.
struct RulesCoverageReport: Sendable {
    /// `/.inspect/coverage.json` or the page at `/.inspect/coverage`.
    enum Format: Sendable, Equatable {
        case json, html
    }

    /// The answer when the server does not record coverage.
    static let off = "Rules coverage is off on this server: start it with --rules-coverage (on by default in emulator mode)"

    /// The page allows no script, no request and no framing; its one inline style sheet is all
    /// it loads (it is saved and opened from disk as well, so it carries everything it shows).
    static let pageHeaders: [(String, String)] = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
    ]

    let namespace: String
    let source: String
    let coverage: RulesCoverage

    /// The JSON report (`RulesCoverage.json`), indented for `print=pretty`.
    func json(pretty: Bool) -> [UInt8] {
        let compact = Array(JSONWriter.string(coverage.json(namespace: namespace)).utf8)
        return pretty ? JSONIndenter.indent(compact) : compact
    }

    /// The page (`RulesCoveragePage`).
    var page: [UInt8] { Array(RulesCoveragePage(report: self).text.utf8) }
}
