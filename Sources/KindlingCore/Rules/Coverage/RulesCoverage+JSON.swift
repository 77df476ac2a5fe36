extension RulesCoverage {
    /// The report as JSON, in the Firebase emulator's coverage form as far as it is known
    /// (`GET /.inspect/coverage.json`): each expression a node with `text`, `location-start` and
    /// `location-end` (`"line:column"`, both counted from 0, the end being the expression's last
    /// character), `values` (`[{"value": …, "count": n}]`) and `children` (its parts, left out
    /// when it has none).
    ///
    /// Kindling's own: the object around the nodes (`namespace`, `summary`, `rules`), and on each
    /// node `count` (its evaluations), `otherValues` (evaluations whose value was not kept, when
    /// there are any), `boolean` (true on boolean expressions) and, on a whole rule, `rule` (its
    /// place in the rules, `rules/users/$uid/.write`). A value that is not a JSON primitive is an
    /// object naming its `type`: `snapshot` (with its `path` and `new`, true for `newData`),
    /// `object`, `query`, `number` (`text`: `NaN`, `Infinity`, `-Infinity`) or `error` (with its
    /// `message`); a string kept by its start has `"truncated": true` beside its count.
    public func json(namespace: String) -> JSONValue {
        let summary = self.summary
        let (roots, parts) = tree
        return .object([
            JSONMember("namespace", .string(namespace)),
            JSONMember(
                "summary",
                .object([
                    JSONMember("expressions", .number(Double(summary.expressions))),
                    JSONMember("evaluated", .number(Double(summary.evaluated))),
                    JSONMember("percent", .number(summary.percent)),
                    JSONMember("booleans", .number(Double(summary.booleans))),
                    JSONMember("outcomes", .number(Double(2 * summary.booleans))),
                    JSONMember("outcomesSeen", .number(Double(summary.outcomesSeen))),
                    JSONMember("outcomePercent", .number(summary.outcomePercent)),
                ])),
            JSONMember("rules", .array(roots.map { node($0, parts: parts) })),
        ])
    }

    private func node(_ index: Int, parts: [[Int]]) -> JSONValue {
        let site = sites[index]
        let counts = counts[index]
        var members = [
            JSONMember("text", .string(site.text)),
            JSONMember("location-start", .string(RulesCoverage.location(site.start))),
            JSONMember("location-end", .string(RulesCoverage.location(lastCharacterOf: site))),
            JSONMember("values", .array(counts.values.map(RulesCoverage.json))),
        ]
        if !parts[index].isEmpty { members.append(JSONMember("children", .array(parts[index].map { node($0, parts: parts) }))) }
        members.append(JSONMember("count", .number(Double(counts.evaluations))))
        if counts.otherValues > 0 { members.append(JSONMember("otherValues", .number(Double(counts.otherValues)))) }
        if site.isBoolean { members.append(JSONMember("boolean", .bool(true))) }
        if site.parent == nil { members.append(JSONMember("rule", .string(site.rule))) }
        return .object(members)
    }

    /// `"line:column"` counted from 0, as the emulator writes them.
    static func location(_ position: RulesSourcePosition) -> String {
        "\(position.line - 1):\(position.column - 1)"
    }

    /// The place of a site's last character (its `end` is just past it, on the same line: an
    /// expression ends with a token, never with a line break).
    static func location(lastCharacterOf site: RuleCoverageSite) -> String {
        location(RulesSourcePosition(line: site.end.line, column: max(site.end.column - 1, 1)))
    }

    static func json(_ entry: ValueCount) -> JSONValue {
        var members = [JSONMember("value", json(entry.value)), JSONMember("count", .number(Double(entry.count)))]
        if case .string(_, truncated: true) = entry.value { members.append(JSONMember("truncated", .bool(true))) }
        return .object(members)
    }

    static func json(_ value: RuleCoverageValue) -> JSONValue {
        let typed = { (type: String, more: [JSONMember]) in JSONValue.object([JSONMember("type", .string(type))] + more) }
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number)
        case .string(let text, _): return .string(text)
        case .nonFinite(let text): return typed("number", [JSONMember("text", .string(text))])
        case .snapshot(let path, let isNew): return typed("snapshot", [JSONMember("path", .string(path)), JSONMember("new", .bool(isNew))])
        case .object: return typed("object", [])
        case .query: return typed("query", [])
        case .error(let message): return typed("error", [JSONMember("message", .string(message))])
        }
    }
}
