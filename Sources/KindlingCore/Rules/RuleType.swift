/// The static types the rules type checker infers (targaryen's `types.js`, which live Firebase
/// agrees with): exact types, plus the fuzzy `any` (auth and its members: unknown until run
/// time) and `primitive` (one of string, number, boolean or null: `val()`, mixed ternaries).
enum RuleType: Sendable, Equatable, CustomStringConvertible {
    case boolean
    case number
    case string
    case null
    case snapshot
    case query
    case any
    case primitive

    /// True for the types only known at run time.
    var isFuzzy: Bool { self == .any || self == .primitive }

    /// True for values `==` may compare: primitives and fuzzy types.
    var isComparable: Bool {
        switch self {
        case .boolean, .number, .string, .null, .any, .primitive: return true
        case .snapshot, .query: return false
        }
    }

    var description: String {
        switch self {
        case .boolean: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .null: return "null"
        case .snapshot: return "RuleDataSnapshot"
        case .query: return "Query"
        case .any: return "any"
        case .primitive: return "primitive"
        }
    }
}
