import Foundation

/// A server to dial: host and port parsed from `nats://host:port`, `host:port` or `host`.
public struct NATSServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP address.
    public var host: String
    /// The client port.
    public var port: Int

    /// Makes an address from parts.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses a URL as configured or as INFO's connect_urls lists it; the default port is 4222.
    public init(parsing url: String) throws(NATSError) {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") {
            guard rest[..<scheme.lowerBound] == "nats" else { throw .invalidURL(url) }
            rest = rest[scheme.upperBound...]
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        var host = rest
        var port = 4222
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                guard let parsed = Int(after.dropFirst()) else { throw .invalidURL(url) }
                port = parsed
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let parsed = Int(rest[rest.index(after: colon)...]) else { throw .invalidURL(url) }
            port = parsed
        }
        guard !host.isEmpty, (1...65535).contains(port) else { throw .invalidURL(url) }
        self.host = String(host)
        self.port = port
    }

    public var description: String { "nats://\(host):\(port)" }
}
