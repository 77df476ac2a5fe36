/// Which browser pages may use the server, so that a web page the developer happens to visit
/// cannot read or wipe a local database: by cross-origin `fetch` (CORS), by a WebSocket from the
/// page, or by DNS rebinding (a hostile name resolving to 127.0.0.1).
///
/// A request carrying `Origin` (browsers add it to cross-origin requests and every WebSocket)
/// is served only for loopback origins (`http(s)://localhost`, `127.0.0.1`, `[::1]`, any port),
/// the server's own origin (same-origin: the console) and the configured ones; `*` allows all. While the server listens on loopback, the `Host`
/// must also be a loopback name (`*.localhost` included, for namespace-from-host) or a
/// configured one. Requests without these headers (SDKs, curl) are unaffected.
struct BrowserAccessPolicy: Sendable {
    let allowsAnyOrigin: Bool
    private let origins: Set<String>
    /// False when the server listens beyond loopback, or `*` is among the allowed hosts.
    let checksHost: Bool
    private let hosts: Set<String>

    init(configuration: ServerConfiguration) {
        allowsAnyOrigin = configuration.corsOrigins.contains("*")
        origins = Set(configuration.corsOrigins.map { BrowserAccessPolicy.normalizedOrigin($0) })
        checksHost = ProtectedMode.isLoopback(configuration.host) && !configuration.allowedHosts.contains("*")
        hosts = Set(configuration.allowedHosts.map { BrowserAccessPolicy.hostName($0) })
    }

    /// Whether a request with this `Origin` header, sent to `host` (the request's `Host`), may be
    /// served. A same-origin request (the origin's authority is the `Host`) always may: it comes
    /// from a page this server served, such as the console at `/.console`, and the `Host` check
    /// (`allows(host:)`) has already kept rebinding names out.
    func allows(origin: String, host: String?) -> Bool {
        if allowsAnyOrigin { return true }
        let normalized = BrowserAccessPolicy.normalizedOrigin(origin)
        if origins.contains(normalized) { return true }
        for scheme in ["http://", "https://"] where normalized.hasPrefix(scheme) {
            let authority = String(normalized.dropFirst(scheme.count))
            if let host, authority == host.lowercased() { return true }
            return BrowserAccessPolicy.isLoopbackName(BrowserAccessPolicy.hostName(authority), subdomains: false)
        }
        return false
    }

    /// Whether a page may load a JSONP answer (`callback=`) as a script. A `<script>` sends no
    /// `Origin`, so the page is known by its `Referer` (whose origin must be one `Origin` would
    /// be allowed for) or, without one, by `Sec-Fetch-Site`: `same-origin` or `none` (typed in)
    /// may. With neither, the page cannot be told: browsers send `Sec-Fetch-Site` only to
    /// https and loopback addresses, and a page can withhold its `Referer`, so it may not
    /// (JSONP is for browsers; anything else reads the JSON itself).
    func allowsScript(fetchSite: String?, referer: String?, host: String?) -> Bool {
        if allowsAnyOrigin { return true }
        if let referer { return BrowserAccessPolicy.origin(ofURL: referer).map { allows(origin: $0, host: host) } ?? false }
        switch fetchSite?.lowercased() {
        case "same-origin", "none": return true
        default: return false
        }
    }

    /// `scheme://authority` of an absolute URL, or nil when it is not one.
    static func origin(ofURL url: String) -> String? {
        guard let separator = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        let rest = url[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty else { return nil }
        return "\(scheme)://\(authority)"
    }

    /// Whether a request with this `Host` header may be served.
    func allows(host: String) -> Bool {
        guard checksHost else { return true }
        let name = BrowserAccessPolicy.hostName(host)
        return BrowserAccessPolicy.isLoopbackName(name, subdomains: true) || hosts.contains(name)
    }

    /// The name part of a `host[:port]` authority, lower-cased; nil-safe for anything malformed
    /// (it then matches no allowed name). An IPv6 literal keeps its brackets.
    static func hostName(_ authority: String) -> String {
        let lowered = authority.lowercased()
        if lowered.hasPrefix("[") {
            guard let close = lowered.firstIndex(of: "]") else { return lowered }
            let rest = lowered[lowered.index(after: close)...]
            guard rest.isEmpty || BrowserAccessPolicy.isPort(rest) else { return lowered }
            return String(lowered[...close])
        }
        guard let colon = lowered.lastIndex(of: ":") else { return lowered }
        let port = lowered[colon...]
        guard BrowserAccessPolicy.isPort(port) else { return lowered }
        return String(lowered[..<colon])
    }

    /// `:` then 1 to 5 digits.
    private static func isPort(_ text: Substring) -> Bool {
        text.first == ":" && (2...6).contains(text.count) && text.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }
    }

    private static func isLoopbackName(_ name: String, subdomains: Bool) -> Bool {
        if name == "localhost" || name == "127.0.0.1" || name == "[::1]" { return true }
        return subdomains && name.hasSuffix(".localhost") && name.count > ".localhost".count
    }

    /// An origin compares lower-cased and without a trailing slash.
    private static func normalizedOrigin(_ origin: String) -> String {
        var lowered = origin.lowercased()
        while lowered.hasSuffix("/") { lowered.removeLast() }
        return lowered
    }
}
