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

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
