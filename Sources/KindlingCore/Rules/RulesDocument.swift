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
    /// Every expression and sub-expression, numbered as the document's probes number them, when
    /// it was loaded for rules coverage; nil otherwise (then evaluating it records nothing and
    /// costs nothing for coverage).
    public let coverageSites: [RuleCoverageSite]?

    init(source: String, indexDeclarations: [RuleIndexDeclaration], root: RuleNode, coverageSites: [RuleCoverageSite]? = nil) {
        self.source = source
        self.indexDeclarations = indexDeclarations
        self.root = root
        self.coverageSites = coverageSites
    }

    /// Loads a rules document: JSON with `//` and `/* */` comments and line breaks in strings.
    /// With `coverage`, every expression is numbered and probed, so that evaluations given a
    /// `RulesCoverage` count in it.
    public static func parse(_ text: String, coverage: Bool = false) throws(RulesError) -> RulesDocument {
        var loader = RulesDocumentLoader(text, coverage: coverage)
        let root = try loader.load()
        return RulesDocument(source: text, indexDeclarations: loader.indexDeclarations, root: root, coverageSites: loader.coverageSites)
    }

    /// This document loaded for rules coverage: itself when it already is, else its source
    /// loaded again with coverage (which a loaded source does).
    public func instrumented() -> RulesDocument {
        if coverageSites != nil { return self }
        return (try? RulesDocument.parse(source, coverage: true)) ?? self
    }

    /// A copy that shares no compiled object with this one: the source loaded again.
    ///
    /// Evaluating rules retains and releases their compiled objects. Namespaces that hold one
    /// document evaluate it on different cores at once, and those atomic counts then contend for
    /// the same cache lines: two busy namespaces under one rules-heavy document spent ~40% more
    /// CPU per write than under a copy each (BENCHMARKS.md, "Two namespaces"). The document
    /// itself comes back only if its source would not load again, which a loaded source does.
    /// A copy loaded for coverage is loaded for it too, with the same sites.
    public func unshared() -> RulesDocument {
        (try? RulesDocument.parse(source, coverage: coverageSites != nil)) ?? self
    }

    /// Everyone may read and write everything: `{"rules":{".read":true,".write":true}}`.
    public static let open: RulesDocument = {
        let open = RuleNode(
            read: CompiledRule(true), write: CompiledRule(true),
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
        canRead(path, auth: auth, root: root, query: query, now: now, explain: explain, tally: nil)
    }

    /// `canRead`, counting what it evaluates in `coverage` when there is one (made from this
    /// document, `RulesCoverage(document)`).
    public func canRead(
        _ path: Path,
        auth: JSONValue,
        root: Node,
        query: Query?,
        now: Int64,
        explain: Bool = false,
        coverage: inout RulesCoverage?
    ) -> RuleDecision {
        guard coverage != nil, coverageSites != nil else { return canRead(path, auth: auth, root: root, query: query, now: now, explain: explain) }
        let tally = RuleCoverageTally()
        let decision = canRead(path, auth: auth, root: root, query: query, now: now, explain: explain, tally: tally)
        coverage?.absorb(tally)
        return decision
    }

    private func canRead(
        _ path: Path,
        auth: JSONValue,
        root: Node,
        query: Query?,
        now: Int64,
        explain: Bool,
        tally: RuleCoverageTally?
    ) -> RuleDecision {
        var cascade = RuleCascade(root: self.root, explain: explain)
        var scope = RuleScope(
            auth: auth, oldRoot: root, newTree: RuleNewTree(built: .empty), now: Double(now), query: query, data: root, coverage: tally)
        scope.start(at: path.keys)
        return cascade.canRead(&scope)
    }

    /// Writes: may `auth` make `write`, the resolved write (server values already resolved;
    /// `.set` or `.merge`), to the tree `old`? The rules' `newData` is the tree after the whole
    /// write, computed only at the levels a rule reads it (the tree is never built whole).
    /// A merge is one decision: each entry's full path (write.path + entry.path) needs its own
    /// `.write` grant at or above it, validation runs against the merged new tree; an empty merge
    /// is allowed.
    public func canWrite(_ write: Write, auth: JSONValue, old: Node, now: Int64, explain: Bool = false) -> RuleDecision {
        canWrite(write, auth: auth, old: old, new: RuleNewTree(old: old, write: write), now: now, explain: explain)
    }

    /// `canWrite`, counting what it evaluates in `coverage` when there is one (made from this
    /// document, `RulesCoverage(document)`).
    public func canWrite(_ write: Write, auth: JSONValue, old: Node, now: Int64, explain: Bool = false, coverage: inout RulesCoverage?)
        -> RuleDecision
    {
        guard coverage != nil, coverageSites != nil else { return canWrite(write, auth: auth, old: old, now: now, explain: explain) }
        let tally = RuleCoverageTally()
        let decision = canWrite(write, auth: auth, old: old, new: RuleNewTree(old: old, write: write), now: now, explain: explain, tally: tally)
        coverage?.absorb(tally)
        return decision
    }

    /// `canWrite` with the new tree given (tests compare the lazy tree with one built whole).
    func canWrite(
        _ write: Write, auth: JSONValue, old: Node, new: RuleNewTree, now: Int64, explain: Bool, tally: RuleCoverageTally? = nil
    ) -> RuleDecision {
        if case .merge(_, let entries) = write, entries.isEmpty {
            return RuleDecision(allowed: true, trace: explain ? ["An empty update changes nothing: allowed."] : [])
        }
        var cascade = RuleCascade(root: root, explain: explain)
        var scope = RuleScope(auth: auth, oldRoot: old, newTree: new, now: Double(now), query: nil, data: old, coverage: tally)
        return cascade.canWrite(write, &scope)
    }
}
