/// What one evaluation of a coverage site gave: a value as a report shows it, or the run-time
/// error that stopped the expression.
///
/// Primitives are kept as they are (a long string by its start); a snapshot by where it is, so
/// the report says which data a rule looked at; other objects by their kind only.
public enum RuleCoverageValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A finite number (negative zero is zero, as `==` has it).
    case number(Double)
    /// `NaN`, `Infinity` or `-Infinity`, which JSON has no number for.
    case nonFinite(String)
    /// A string, or its first `maxStringBytes` bytes when `truncated`.
    case string(String, truncated: Bool)
    /// A `RuleDataSnapshot` at `path` (`/a/b`) of the data before the request, or after it
    /// when `isNew` (`newData`).
    case snapshot(path: String, isNew: Bool)
    /// `val()` of a location with children, or an object or array inside `auth` (or `auth`).
    case object
    case query
    /// The expression stopped with this run-time error (the rule then counts as false).
    case error(String)

    /// Longer strings are kept by their first bytes this many (at a character boundary).
    public static let maxStringBytes = 256

    /// `value` as evaluated at the path `keys` (snapshots are at a prefix of it).
    init(_ value: RuleValue, keys: [Key]) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number):
            if number.isNaN {
                self = .nonFinite("NaN")
            } else if number.isInfinite {
                self = .nonFinite(number < 0 ? "-Infinity" : "Infinity")
            } else {
                self = .number(number == 0 ? 0 : number)
            }
        case .string(let text): self = RuleCoverageValue.string(text)
        case .object, .json: self = .object
        case .query: self = .query
        case .snapshot(let snapshot):
            let location = keys.prefix(snapshot.depth).map(\.string) + snapshot.extra.map(\.string)
            self = .snapshot(path: "/" + location.joined(separator: "/"), isNew: snapshot.isNew)
        }
    }

    /// A string, cut to `maxStringBytes` bytes at the last character boundary before them.
    static func string(_ text: String) -> RuleCoverageValue {
        let bytes = text.utf8
        guard bytes.count > maxStringBytes else { return .string(text, truncated: false) }
        var cut = bytes.index(bytes.startIndex, offsetBy: maxStringBytes)
        while cut > bytes.startIndex, UTF8.isContinuation(bytes[cut]) { cut = bytes.index(before: cut) }
        return .string(String(decoding: bytes[..<cut], as: UTF8.self), truncated: true)
    }

    /// Bytes held for the value, towards a report's limit (`RulesCoverage.maxStoredBytes`).
    var storedBytes: Int {
        switch self {
        case .string(let text, _), .nonFinite(let text), .error(let text): return 32 + text.utf8.count
        case .snapshot(let path, _): return 32 + path.utf8.count
        case .null, .bool, .number, .object, .query: return 32
        }
    }
}
