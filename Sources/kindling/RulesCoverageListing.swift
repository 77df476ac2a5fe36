import KindlingCore

/// A rules coverage report read from its JSON (`GET /.inspect/coverage.json`): the totals, the
/// expressions never evaluated (the outermost ones: each stands for its parts) and the boolean
/// ones that returned only one of `true` and `false`, each at its line and column from 1.
struct RulesCoverageListing: Equatable {
    /// An expression to look at.
    struct Entry: Equatable {
        var line: Int
        var column: Int
        var rule: String
        var text: String
        /// For one with one outcome: which (`only true`, `only false`, `no boolean`).
        var outcome: String?
    }

    /// What a report that does not read as one is missing.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    var namespace: String
    var expressions: Int
    var evaluated: Int
    var percent: Double
    var outcomes: Int
    var outcomesSeen: Int
    var outcomePercent: Double
    var unevaluated: [Entry] = []
    var oneOutcome: [Entry] = []

    init(json: JSONValue) throws(Malformed) {
        guard let summary = json["summary"], let rules = json["rules"], case .array(let roots) = rules else {
            throw Malformed(description: "no summary or rules")
        }
        let number = { (name: String) throws(Malformed) -> Double in
            guard let value = summary[name]?.numberValue else { throw Malformed(description: "no summary.\(name)") }
            return value
        }
        namespace = json["namespace"]?.stringValue ?? ""
        expressions = Int(try number("expressions"))
        evaluated = Int(try number("evaluated"))
        percent = try number("percent")
        outcomes = Int(try number("outcomes"))
        outcomesSeen = Int(try number("outcomesSeen"))
        outcomePercent = try number("outcomePercent")
        // The report has the rules in document order and each one's parts by their start, so a
        // walk lists in document order, a whole before its parts.
        for root in roots { try visit(root, rule: root["rule"]?.stringValue ?? "", wholeEvaluated: true) }
    }

    private mutating func visit(_ node: JSONValue, rule: String, wholeEvaluated: Bool) throws(Malformed) {
        guard let count = node["count"]?.numberValue, let text = node["text"]?.stringValue,
            let location = node["location-start"]?.stringValue
        else { throw Malformed(description: "an expression without its count, text or location-start") }
        let parts = location.split(separator: ":")
        guard parts.count == 2, let line = Int(parts[0]), let column = Int(parts[1]) else {
            throw Malformed(description: "location-start \(location) is not line:column")
        }
        // One line each, whatever the rule's line breaks.
        let entry = Entry(line: line + 1, column: column + 1, rule: rule, text: String(text.map { $0.isNewline ? " " : $0 }))
        if count == 0, wholeEvaluated { unevaluated.append(entry) }
        if count > 0, node["boolean"]?.boolValue == true {
            var seen: [String] = []
            if case .array(let values)? = node["values"] {
                for flag in [true, false] where values.contains(where: { $0["value"] == .bool(flag) }) { seen.append(flag ? "true" : "false") }
            }
            if seen.count < 2 {
                var partial = entry
                partial.outcome = seen.isEmpty ? "no boolean (errors only)" : "only " + seen.joined()
                oneOutcome.append(partial)
            }
        }
        if case .array(let children)? = node["children"] {
            for child in children { try visit(child, rule: rule, wholeEvaluated: count > 0) }
        }
    }

    /// The summary `kindling rules coverage` prints.
    var text: String {
        var text = "Rules coverage of namespace \(namespace): \(evaluated) of \(expressions) expressions evaluated "
        text += "(\(Self.number(percent))%), \(outcomesSeen) of \(outcomes) boolean outcomes seen (\(Self.number(outcomePercent))%)\n"
        if !unevaluated.isEmpty {
            text += "Never evaluated (\(unevaluated.count)):\n"
            for entry in unevaluated { text += "  \(entry.line):\(entry.column)  \(entry.rule)  \(entry.text)\n" }
        }
        if !oneOutcome.isEmpty {
            text += "Only one outcome (\(oneOutcome.count)):\n"
            for entry in oneOutcome { text += "  \(entry.line):\(entry.column)  \(entry.rule)  \(entry.text)  (\(entry.outcome ?? ""))\n" }
        }
        return text
    }

    /// A percentage as JSON writes it (`75`, `66.66`).
    static func number(_ value: Double) -> String { JSONWriter.string(.number(value)) }
}
