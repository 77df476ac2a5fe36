/// A parsed, compiled rules document: Firebase's security rules, decided for each read and
/// write as live Firebase does (see `shared/docs/rules-language.md`).
///
/// Every expression is parsed and type-checked once, when the document loads; a mistake anywhere
/// rejects the whole document with its line and column, so bad rules never reach a request.
/// Evaluation then walks only the levels on the request's path.
public struct RulesDocument: Sendable {
    /// The text as given, comments included.
    public let source: String
    /// Every `.indexOn` declaration: the rules path (wildcard segments as `"$name"`) and the specs.
    public let indexDeclarations: [RuleIndexDeclaration]
    let root: RuleNode

    /// Loads a rules document: JSON with `//` and `/* */` comments and line breaks in strings.
    public static func parse(_ text: String) throws(RulesError) -> RulesDocument {
        var loader = RulesDocumentLoader(text)
        let root = try loader.load()
        return RulesDocument(source: text, indexDeclarations: loader.indexDeclarations, root: root)
    }

    /// Everyone may read and write everything: `{"rules":{".read":true,".write":true}}`.
    public static let open: RulesDocument = {
        let open = RuleNode(
            read: CompiledRule(source: "true", expression: .constant(.bool(true))),
            write: CompiledRule(source: "true", expression: .constant(.bool(true))),
            validate: nil, literals: [], wildcard: nil)
        return RulesDocument(source: "{\"rules\":{\".read\":true,\".write\":true}}", indexDeclarations: [], root: open)
    }()

    /// Nobody but an admin may read or write anything: `{"rules":{".read":false,".write":false}}`,
    /// the rules of a server that was given none outside emulator mode.
    public static let locked: RulesDocument = {
        let locked = RuleNode(
            read: CompiledRule(source: "false", expression: .constant(.bool(false))),
            write: CompiledRule(source: "false", expression: .constant(.bool(false))),
            validate: nil, literals: [], wildcard: nil)
        return RulesDocument(source: "{\"rules\":{\".read\":false,\".write\":false}}", indexDeclarations: [], root: locked)
    }()

    /// Reads (get, listen, REST GET, SSE): may `auth` read `path`? `query` is the listen's or
    /// REST query (nil = none); `root` is the current tree; `now` ms since epoch.
    public func canRead(
        _ path: Path,
        auth: JSONValue,
        root: Node,
        query: Query?,
        now: Int64,
        explain: Bool = false
    ) -> RuleDecision {
        var cascade = RuleCascade(root: self.root, explain: explain)
        let scope = RuleScope(
            auth: auth, oldRoot: root, newRoot: root, keys: path.keys, depth: 0, now: Double(now), query: query, data: root,
            newData: .empty)
        return cascade.canRead(scope)
    }

    /// Writes: `write` is the resolved write (server values already resolved; `.set` or
    /// `.merge`), `old` the tree before, `new` the tree after applying the whole write.
    /// A merge is one decision: each entry's full path (write.path + entry.path) needs its own
    /// `.write` grant at or above it, validation runs against the merged `new`; an empty merge is
    /// allowed.
    public func canWrite(_ write: Write, auth: JSONValue, old: Node, new: Node, now: Int64, explain: Bool = false) -> RuleDecision {
        let paths: [Path]
        switch write {
        case .set(let path, _): paths = [path]
        case .merge(let path, let entries):
            guard !entries.isEmpty else {
                return RuleDecision(allowed: true, trace: explain ? ["An empty update changes nothing: allowed."] : [])
            }
            paths = entries.map { path.appending($0.path) }
        }
        var cascade = RuleCascade(root: root, explain: explain)
        let scope = RuleScope(
            auth: auth, oldRoot: old, newRoot: new, keys: [], depth: 0, now: Double(now), query: nil, data: old, newData: new)
        return cascade.canWrite(paths, scope)
    }
}
