import Testing

@testable import KindlingCore

/// Runs reads and writes against a rules document and a tree, as the server will: writes are
/// resolved (server values included) and applied to get the new tree, then decided.
///
/// Every decision is also made by the document loaded for rules coverage, counting into a
/// coverage: its probes must change no decision and no trace.
struct RulesHarness {
    let rules: RulesDocument
    let instrumented: RulesDocument
    var tree: DataTree
    var now: Int64 = 1_700_000_000_000

    init(_ rules: String, data: String = "null") throws {
        self.rules = try RulesDocument.parse(rules)
        instrumented = try RulesDocument.parse(rules, coverage: true)
        tree = DataTree(root: try Node(jsonText: data))
    }

    /// `A(uid)`: signed in, with the `auth` shape the server builds from an ID token.
    static func user(_ uid: String) -> JSONValue {
        .object([
            JSONMember("uid", .string(uid)), JSONMember("provider", .string("password")),
            JSONMember("token", .object([JSONMember("sub", .string(uid))])),
        ])
    }

    func read(_ path: String, as auth: JSONValue = .null, query: Query? = nil, explain: Bool = false) throws -> RuleDecision {
        let decision = rules.canRead(try Path(path), auth: auth, root: tree.root, query: query, now: now, explain: explain)
        var coverage = RulesCoverage(instrumented)
        let probed = instrumented.canRead(try Path(path), auth: auth, root: tree.root, query: query, now: now, explain: explain, coverage: &coverage)
        #expect(probed == decision, "rules loaded for coverage decide \(path) otherwise")
        return decision
    }

    /// Decides a set of `json` at `path`; commits it when allowed and `commit` is true.
    @discardableResult
    mutating func set(_ path: String, _ json: String, as auth: JSONValue = .null, commit: Bool = true, explain: Bool = false) throws
        -> RuleDecision
    {
        let write = try tree.resolveSet(try Path(path), try JSONParser.parse(json), serverValues: ServerValues(timestamp: Double(now)))
        return decide(write, auth, commit, explain)
    }

    /// Decides an update of the members of the JSON object `json` at `path`.
    @discardableResult
    mutating func update(_ path: String, _ json: String, as auth: JSONValue = .null, commit: Bool = true, explain: Bool = false) throws
        -> RuleDecision
    {
        guard case .object(let members) = try JSONParser.parse(json) else { throw ValidationError(.invalidJSON, "not an object") }
        let write = try tree.resolveUpdate(try Path(path), members, serverValues: ServerValues(timestamp: Double(now)))
        return decide(write, auth, commit, explain)
    }

    private mutating func decide(_ write: Write, _ auth: JSONValue, _ commit: Bool, _ explain: Bool) -> RuleDecision {
        var next = tree
        next.apply(write)
        let decision = rules.canWrite(write, auth: auth, old: tree.root, now: now, explain: explain)
        // The new tree is never built for a decision: every decision here is also made against
        // the tree built whole, and must agree to the last line of its trace.
        let eager = rules.canWrite(write, auth: auth, old: tree.root, new: RuleNewTree(built: next.root), now: now, explain: explain)
        #expect(decision == eager, "lazy and built new trees disagree on \(write)")
        var coverage = RulesCoverage(instrumented)
        let probed = instrumented.canWrite(write, auth: auth, old: tree.root, now: now, explain: explain, coverage: &coverage)
        #expect(probed == decision, "rules loaded for coverage decide \(write) otherwise")
        if decision.allowed, commit { tree = next }
        return decision
    }
}
