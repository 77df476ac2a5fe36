/// A value while a rule runs. Primitives are held inline; snapshots are a node of an immutable
/// tree plus where it is, so nothing here copies data.
enum RuleValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    /// `val()` of a node with children: an opaque value (rules spec §6) that is not null, equal
    /// only to the same data, and refused by arithmetic, ordering and string methods.
    case object(Node)
    /// An object or array inside `auth` (its members are read with `.`/`[]`).
    case json(JSONValue)
    case snapshot(RuleSnapshot)
    case query

    init(_ leaf: Leaf) {
        switch leaf {
        case .bool(let flag): self = .bool(flag)
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        }
    }

    init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .array, .object: self = .json(json)
        }
    }

    /// The run-time type's name, for error messages.
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .object, .json: return "object"
        case .snapshot: return "RuleDataSnapshot"
        case .query: return "Query"
        }
    }

    /// Strict equality (`==` is `===`): same type and same value; strings by their exact
    /// characters, numbers as IEEE doubles (NaN is equal to nothing).
    static func strictlyEqual(_ lhs: RuleValue, _ rhs: RuleValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(l), .bool(r)): return l == r
        case let (.number(l), .number(r)): return l == r
        case let (.string(l), .string(r)): return l.utf8.elementsEqual(r.utf8)
        case let (.object(l), .object(r)): return l == r
        case let (.json(l), .json(r)): return l == r
        default: return false
        }
    }

    /// JavaScript's `ToString` for a number, as `+` concatenation uses it (`NaN`, `Infinity`,
    /// `1e+21`, `0.5`, and `0` for negative zero).
    static func jsString(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        if number == 0 { return "0" }
        return JSNumberFormat.string(number)
    }
}
