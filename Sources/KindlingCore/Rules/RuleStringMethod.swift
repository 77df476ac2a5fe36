/// The string methods of the rules language (`matches` has its own expression case).
enum RuleStringMethod: String, Sendable {
    case contains
    case beginsWith
    case endsWith
    case replace
    case toLowerCase
    case toUpperCase
    case matches

    /// How many arguments the method takes.
    var arity: Int {
        switch self {
        case .contains, .beginsWith, .endsWith, .matches: return 1
        case .replace: return 2
        case .toLowerCase, .toUpperCase: return 0
        }
    }

    var resultType: RuleType {
        switch self {
        case .contains, .beginsWith, .endsWith, .matches: return .boolean
        case .replace, .toLowerCase, .toUpperCase: return .string
        }
    }
}
