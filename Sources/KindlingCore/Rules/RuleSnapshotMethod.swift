/// The `RuleDataSnapshot` methods that take no argument (`child`, `hasChild` and
/// `hasChildren([…])` have their own expression cases).
enum RuleSnapshotMethod: String, Sendable {
    case val
    case parent
    case exists
    case getPriority
    case isNumber
    case isString
    case isBoolean
    case hasChildren
}
