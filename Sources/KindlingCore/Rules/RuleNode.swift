/// One level of a loaded rules tree: its rules and its children, literal keys and at most one
/// `$wildcard`. Immutable once loaded, and shared by every request.
final class RuleNode: Sendable {
    let read: CompiledRule?
    let write: CompiledRule?
    let validate: CompiledRule?
    /// The literal children (looked up by UTF-8 bytes: `Key` equality); a dictionary is built
    /// only for wide levels, since comparing a few keys' cached prefixes beats hashing.
    let literalKeys: [Key]
    let literalNodes: [RuleNode]
    private let literalIndex: [Key: Int]?
    /// The `$name` child, if any (its name lives in the compiled rules' capture slots).
    let wildcard: RuleNode?
    /// True when this node or one below it has a `.validate` rule: a write's walk over the
    /// written data skips every branch where this is false.
    let validatesBelow: Bool
    /// True when a node strictly below this one has a `.validate` rule: a write's location is
    /// walked below only then (its own rule ran on the way down).
    let validatesUnder: Bool
    /// True when a node strictly below this one has a `.write` rule: where this is false and no
    /// `.write` at or above has granted, nothing further down the path can grant.
    let writesUnder: Bool

    init(
        read: CompiledRule?,
        write: CompiledRule?,
        validate: CompiledRule?,
        literals: [(Key, RuleNode)],
        wildcard: (name: String, node: RuleNode)?
    ) {
        self.read = read
        self.write = write
        self.validate = validate
        literalKeys = literals.map(\.0)
        literalNodes = literals.map(\.1)
        if literals.count > 8 {
            var index: [Key: Int] = [:]
            for (position, key) in literalKeys.enumerated() { index[key] = position }
            literalIndex = index
        } else {
            literalIndex = nil
        }
        self.wildcard = wildcard?.node
        validatesUnder = literals.contains { $0.1.validatesBelow } || wildcard?.node.validatesBelow == true
        validatesBelow = validate != nil || validatesUnder
        writesUnder =
            literals.contains { $0.1.write != nil || $0.1.writesUnder }
            || wildcard.map { $0.node.write != nil || $0.node.writesUnder } == true
    }

    /// The literal child named `key`.
    @inline(__always)
    func literal(_ key: Key) -> RuleNode? {
        if let literalIndex { return literalIndex[key].map { literalNodes[$0] } }
        for index in literalKeys.indices where literalKeys[index] == key { return literalNodes[index] }
        return nil
    }

    /// The rules for child `key`: the literal child, else the wildcard (a literal beats the
    /// wildcard, which is then not consulted). `.priority` has no rules of its own.
    @inline(__always)
    func child(_ key: Key) -> RuleNode? {
        if let node = literal(key) { return node }
        return key.isPriority ? nil : wildcard
    }
}
