/// The path argument of `child()`, `hasChild()` and each name of `hasChildren([…])`: split into
/// keys when the rules load if it is a literal, else computed (a string) when the rule runs.
enum RuleChildPath: Sendable {
    case keys([Key])
    case expression(RuleExpression)

    /// Keys for path text. Live Firebase accepts any text (`child('a/b@c.d')` is simply absent
    /// data), so segments are not validated as storable keys: one that could never be stored
    /// just finds nothing. Empty segments are skipped, as in paths.
    static func keys(_ text: String) -> [Key] {
        text.split(separator: "/", omittingEmptySubsequences: true).map { Key(unchecked: String($0)) }
    }
}
