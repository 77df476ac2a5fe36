/// One `.indexOn` declaration of a rules document, for the server's index store and its
/// "unindexed query" warnings.
public struct RuleIndexDeclaration: Sendable, Equatable {
    /// The rules path of the node declaring it, root first; wildcard segments as `"$name"`.
    public let path: [String]
    /// The declared specs: `".value"`, or child keys / relative child paths.
    public let on: [String]

    public init(path: [String], on: [String]) {
        self.path = path
        self.on = on
    }
}
