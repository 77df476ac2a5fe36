/// Decides one read or write by walking the rules tree exactly as rules spec §3 lays out:
/// `.read`/`.write` cascade (the first true at or above the path grants, deeper ones are not
/// run), `.validate` runs at every level with data, from the root down to the written leaves.
///
/// With `explain`, every rule run is recorded, targaryen style, for `RuleDecision.trace`.
struct RuleCascade {
    let root: RuleNode
    let explain: Bool
    private(set) var trace: [String] = []
    /// The first failing `.validate`, for the trace's last line.
    private var failedValidation: String?

    init(root: RuleNode, explain: Bool) {
        self.root = root
        self.explain = explain
    }

    /// Runs one rule at the scope's level, first walking `data`/`newData` down to it if the
    /// rule reads them; a run-time error makes it false.
    private mutating func run(_ rule: CompiledRule, _ kind: String, _ scope: inout RuleScope) -> Bool {
        if rule.usesData { scope.reachData() }
        if rule.usesNewData { scope.reachNewData() }
        let result = scope.check(rule.expression)
        let passed: Bool
        switch result {
        case .success(let flag): passed = flag
        case .failure: passed = false
        }
        if explain {
            let outcome: String
            switch result {
            case .success(let flag): outcome = flag ? "true" : "false"
            case .failure(let error): outcome = "error: \(error.message)"
            }
            let line = "\(RuleCascade.display(scope.keys, scope.depth)): \(kind) \"\(rule.source)\" => \(outcome)"
            trace.append(line)
            if kind == ".validate", !passed, failedValidation == nil { failedValidation = line }
        }
        return passed
    }

    static func display(_ keys: [Key], _ depth: Int) -> String {
        "/" + keys[0..<depth].map(\.string).joined(separator: "/")
    }

    /// Rules spec §3.1.
    mutating func canRead(_ scope: inout RuleScope) -> RuleDecision {
        var node = root
        while true {
            if let rule = node.read, run(rule, ".read", &scope) {
                return decision(true, "Read was allowed.")
            }
            guard scope.depth < scope.keys.count, let next = node.child(scope.keys[scope.depth]) else { break }
            node = next
            scope.depth += 1
        }
        return decision(false, "No .read rule allowed the operation.")
    }

    private func decision(_ allowed: Bool, _ reason: String) -> RuleDecision {
        explain ? RuleDecision(allowed: allowed, trace: trace + [reason]) : RuleDecision(allowed: allowed)
    }

    /// The decision for a set or a merge, whose every location is checked against the whole
    /// write's new tree (rules spec §3.2, §3.3).
    mutating func canWrite(_ write: Write, _ scope: inout RuleScope) -> RuleDecision {
        var permitted = true
        var validated = true
        switch write {
        case .set(let path, _):
            scope.start(at: path.keys)
            (permitted, validated) = checkWrite(&scope)
        case .merge(let base, let entries):
            for merged in entries {
                scope.start(at: base.keys + merged.path.keys)
                let (granted, valid) = checkWrite(&scope)
                permitted = permitted && granted
                validated = validated && valid
                if !explain, !(permitted && validated) { break }
            }
        }
        if !permitted { return decision(false, "No .write rule allowed the operation.") }
        if !validated { return decision(false, "Validation failed: \(failedValidation ?? "a .validate rule was false").") }
        return decision(true, "Write was allowed.")
    }

    /// One location: is a `.write` at or above it true, and does every `.validate` on the way
    /// down and below it pass? `scope.keys` is the location, `scope.depth` 0.
    private mutating func checkWrite(_ scope: inout RuleScope) -> (permitted: Bool, validated: Bool) {
        var permitted = false
        var validated = true
        var node = root
        while true {
            // Once granted, nothing is left to check where the new data is gone (an empty node
            // stays empty below, so any level already walked tells).
            if permitted && scope.newDataKnown && scope.newData.isEmpty { return (permitted, validated) }
            if !permitted, let rule = node.write { permitted = run(rule, ".write", &scope) }
            // Without a trace, a write that no `.write` on the rest of the path can grant is refused
            // whatever its validation says, so its `.validate` rules (and the new data they read)
            // are not run.
            if !explain, !permitted, !node.writesUnder { return (permitted, validated) }
            if validated, let rule = node.validate {
                scope.reachNewData()
                if !scope.newData.isEmpty { validated = run(rule, ".validate", &scope) }
            }
            if !explain, !validated { return (permitted, validated) }
            guard scope.depth < scope.keys.count else { break }
            guard let next = node.child(scope.keys[scope.depth]) else { return (permitted, validated) }
            node = next
            scope.depth += 1
        }
        guard validated, node.validatesUnder else { return (permitted, validated) }
        scope.reachNewData()
        scope.reachData()
        if !scope.newData.isEmpty { validated = validateBelow(node, &scope) }
        return (permitted, validated)
    }

    /// Runs the `.validate` rules of every descendant of the scope's location that exists in the
    /// new tree (pre-order); false at the first failure.
    private mutating func validateBelow(_ node: RuleNode, _ scope: inout RuleScope) -> Bool {
        if node.wildcard == nil {
            for (index, key) in node.literalKeys.enumerated() where node.literalNodes[index].validatesBelow {
                let child = scope.newData.child(key)
                if !child.isEmpty, !visit(node.literalNodes[index], key, child, &scope) { return false }
            }
            return true
        }
        // A packed record is walked as it is, in the same key order, rather than first turned
        // into a child map.
        if case .packed(let packed) = scope.newData.representation { return visitEach(node, packed, &scope) }
        return visitEach(node, scope.newData.children, &scope)
    }

    /// Visits, in order, each of `children` that `node` has rules with a `.validate` for.
    private mutating func visitEach(
        _ node: RuleNode,
        _ children: some Sequence<(key: Key, node: Node)>,
        _ scope: inout RuleScope
    ) -> Bool {
        for (key, child) in children {
            guard let rules = node.child(key), rules.validatesBelow else { continue }
            if !visit(rules, key, child, &scope) { return false }
        }
        return true
    }

    private mutating func visit(_ node: RuleNode, _ key: Key, _ newData: Node, _ scope: inout RuleScope) -> Bool {
        let (data, newParent) = (scope.data, scope.newData)
        scope.keys.append(key)
        scope.depth += 1
        scope.data = data.child(key)
        scope.newData = newData
        (scope.dataDepth, scope.newDataDepth) = (scope.depth, scope.depth)
        defer {
            scope.keys.removeLast()
            scope.depth -= 1
            scope.data = data
            scope.newData = newParent
            (scope.dataDepth, scope.newDataDepth) = (scope.depth, scope.depth)
        }
        if let rule = node.validate, !run(rule, ".validate", &scope) { return false }
        return validateBelow(node, &scope)
    }
}
