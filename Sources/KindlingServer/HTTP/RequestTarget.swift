import KindlingProtocol

/// The path and query parameters of a request URI, percent-decoded.
struct RequestTarget: Sendable {
    /// The path, still `/`-separated, each segment percent-decoded (`+` stays a plus).
    var path: String
    /// Query parameters by name (the last value wins); `+` is read as a space only when
    /// `plusIsSpace` is set (form encoding).
    var parameters: [String: String]
    /// The first path segment whose escapes are malformed or decode to bytes that are not
    /// UTF-8 (it stays undecoded in `path`); a REST request with one is refused.
    var undecodableSegment: String?

    init(uri: String, plusIsSpace: Bool = false) {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = parts.first.map(String.init) ?? "/"
        var undecodable: String?
        path = rawPath.split(separator: "/", omittingEmptySubsequences: false)
            .map { segment in
                if let decoded = RequestTarget.percentDecode(segment, plusIsSpace: false) { return decoded }
                if undecodable == nil { undecodable = String(segment) }
                return String(segment)
            }
            .joined(separator: "/")
        undecodableSegment = undecodable
        var parameters: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") where !pair.isEmpty {
                let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = RequestTarget.percentDecode(keyValue[0], plusIsSpace: plusIsSpace) ?? String(keyValue[0])
                let value = keyValue.count > 1 ? (RequestTarget.percentDecode(keyValue[1], plusIsSpace: plusIsSpace) ?? String(keyValue[1])) : ""
                parameters[key] = value
            }
        }
        self.parameters = parameters
    }

    /// Decodes `%XX` escapes (as UTF-8); nil when an escape is malformed or the bytes are not UTF-8.
    static func percentDecode(_ text: Substring, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            } else if byte == UInt8(ascii: "+"), plusIsSpace {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The value of one hexadecimal digit (either case); nil for anything else, a sign included.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The namespace a request is for: `?ns=`, else the one the Host header names
    /// (`NamespaceName.named(byHost:)`), else the default. `?ns=` is not validated here: a bad
    /// one is refused (see `NamespaceName`).
    static func namespace(parameters: [String: String], host: String?, fallback: String) -> String {
        if let ns = parameters["ns"], !ns.isEmpty { return ns }
        return host.flatMap(NamespaceName.named(byHost:)) ?? fallback
    }
}
