/// What a namespace (database) may be called: 1 to 63 lowercase ASCII letters, digits and
/// hyphens, starting with a letter or a digit, as hosted Realtime Database names are (and short
/// enough to be one DNS label, for `<name>.localhost`).
///
/// Names come from clients (`?ns=`, the Host header), become directory names and appear in log
/// lines, so anything else is refused before it reaches storage or a log: no control characters,
/// no path syntax, no names longer than a file name may be.
public enum NamespaceName {
    /// The longest name, in bytes.
    public static let maxLength = 63

    /// The rule, for error messages (which never repeat the refused name).
    public static let rule = "a namespace name is 1 to \(maxLength) lowercase letters (a-z), digits and hyphens, starting with a letter or digit"

    /// True when `name` follows the rule.
    public static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= maxLength, isLetterOrDigit(first) else { return false }
        return bytes.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
    }

    /// The namespace a host name names: its first label (`mydb` for `mydb.localhost:9000`),
    /// lowercased as host names are case-insensitive, when the name has two labels or more, is
    /// not an address, and the label is a valid name (a machine's own name such as `my_pc.lan`
    /// is no database); nil otherwise. The server picks a connection's namespace by it when
    /// there is no `?ns=`, and the SDK picks its own the same way from a database URL.
    public static func named(byHost host: String) -> String? {
        var name = Substring(host)
        if name.hasPrefix("[") { return nil }  // an IPv6 literal
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        let labels = name.split(separator: ".")
        guard labels.count >= 2, !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }), let first = labels.first else {
            return nil
        }
        // ASCII letters only: Unicode lowercasing would turn the Kelvin sign (U+212A) into `k`.
        let label = String(decoding: first.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        return isValid(label) ? label : nil
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
