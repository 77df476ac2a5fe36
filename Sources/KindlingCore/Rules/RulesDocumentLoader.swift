/// Turns the text of a rules document into a `RuleNode` tree, enforcing the document's structure
/// (rules spec §1) and compiling every expression, each error at its line and column.
struct RulesDocumentLoader {
    private let bytes: [UInt8]
    private(set) var indexDeclarations: [RuleIndexDeclaration] = []
    /// Numbers every expression for rules coverage, when the document is loaded for it.
    private let coverage: RuleCoverageCollector?

    init(_ text: String, coverage: Bool = false) {
        bytes = Array(text.utf8)
        self.coverage = coverage ? RuleCoverageCollector() : nil
    }

    /// The expressions numbered for coverage; nil when the document is not loaded for it.
    var coverageSites: [RuleCoverageSite]? { coverage?.sites }

    /// Loads the document's `rules` tree.
    mutating func load() throws(RulesError) -> RuleNode {
        let document = try RulesJSONParser.parse(bytes)
        guard case .object(let members) = document.kind else {
            throw error("The rules document must be an object with one key, \"rules\"", "", at: document.position)
        }
        var rules: RulesJSON?
        for member in members {
            guard member.key == "rules" else {
                throw error("Unexpected key \"\(member.key)\": the document may only hold \"rules\"", "", at: member.keyPosition)
            }
            guard rules == nil else { throw error("Duplicate key \"rules\"", "", at: member.keyPosition) }
            rules = member.value
        }
        guard let rules else { throw error("The rules document has no \"rules\" key", "", at: document.position) }
        return try node(rules, path: ["rules"], captures: [:], depth: 0)
    }

    private func error(_ message: String, _ rulePath: String, at position: RulesSourcePosition) -> RulesError {
        RulesError(message: message, rulePath: rulePath, line: position.line, column: position.column)
    }

    /// Loads one level. `path` is its rules path (`rules`, `users`, `$uid`); `captures` the
    /// wildcards in scope with the path index each captures; `depth` its number of path keys.
    private mutating func node(
        _ value: RulesJSON,
        path: [String],
        captures: [String: Int],
        depth: Int
    ) throws(RulesError) -> RuleNode {
        let here = path.joined(separator: "/")
        guard case .object(let members) = value.kind else {
            throw error("Expected the rules for \(here) to be an object, got \(value.typeName)", here, at: value.position)
        }
        // By UTF-8 bytes, as `Key` compares: "é" and "e\u{301}" are two keys, not a duplicate.
        var seen = Set<[UInt8]>()
        var rules: [String: CompiledRule] = [:]
        var literals: [(Key, RuleNode)] = []
        var wildcard: (name: String, node: RuleNode)?
        for member in members {
            let key = member.key
            let memberPath = here + "/" + key
            guard seen.insert(Array(key.utf8)).inserted else { throw error("Duplicate key \"\(key)\"", memberPath, at: member.keyPosition) }
            if key.hasPrefix(".") {
                switch key {
                case ".read", ".write", ".validate":
                    rules[key] = try rule(member.value, kind: key, path: memberPath, captures: captures)
                case ".indexOn":
                    indexDeclarations.append(RuleIndexDeclaration(path: Array(path.dropFirst()), on: try indexOn(member.value, memberPath)))
                default:
                    throw error(
                        "Invalid rule type \(key): expected .read, .write, .validate or .indexOn", memberPath, at: member.keyPosition)
                }
            } else if key.hasPrefix("$") {
                let name = key
                guard name.utf8.count > 1, name.utf8.dropFirst().allSatisfy(RulesDocumentLoader.isIdentifierByte) else {
                    throw error("Invalid wildcard name \(key): use $ followed by letters, digits or _", memberPath, at: member.keyPosition)
                }
                if let existing = wildcard {
                    throw error(
                        "There can only be one wildchild at a given path (found \(existing.name) and \(key)).", memberPath,
                        at: member.keyPosition)
                }
                guard captures[name] == nil else {
                    throw error("The wildcard \(key) is already declared above this level.", memberPath, at: member.keyPosition)
                }
                var inner = captures
                inner[name] = depth
                wildcard = (name, try node(member.value, path: path + [key], captures: inner, depth: depth + 1))
            } else {
                let childKey: Key
                do {
                    childKey = try Key(key)
                } catch {
                    throw self.error(error.message, memberPath, at: member.keyPosition)
                }
                literals.append((childKey, try node(member.value, path: path + [key], captures: captures, depth: depth + 1)))
            }
        }
        return RuleNode(read: rules[".read"], write: rules[".write"], validate: rules[".validate"], literals: literals, wildcard: wildcard)
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
    }

    private func rule(_ value: RulesJSON, kind: String, path: String, captures: [String: Int]) throws(RulesError) -> CompiledRule {
        switch value.kind {
        case .bool(let flag):
            guard let coverage else { return CompiledRule(flag) }
            let site = coverage.literal(rule: path, flag, at: value.position)
            return CompiledRule(source: flag ? "true" : "false", expression: .probe(site: site, .constant(.bool(flag))))
        case .string(let text, let contentStart):
            let start = RulesSourcePosition(line: value.position.line, column: value.position.column + 1)
            if let coverage {
                let positions = RulesJSONParser.positions(in: bytes, contentStart: contentStart, at: start, count: text.utf8.count)
                coverage.begin(rule: path, text: text, positions: positions)
            }
            let compiler = RuleCompiler(allowsNewData: kind != ".read", captures: captures, coverage: coverage)
            do {
                return try compiler.compile(text)
            } catch {
                let position = RulesJSONParser.position(in: bytes, contentStart: contentStart, at: start, decodedOffset: error.offset)
                throw self.error(error.message, path, at: position)
            }
        default:
            throw self.error("Expected \(kind) to be a boolean or a string holding an expression, got \(value.typeName)", path, at: value.position)
        }
    }

    private func indexOn(_ value: RulesJSON, _ path: String) throws(RulesError) -> [String] {
        switch value.kind {
        case .string(let text, _): return [text]
        case .array(let elements):
            var specs: [String] = []
            for element in elements {
                guard case .string(let text, _) = element.kind else {
                    throw error("Expected .indexOn to hold only strings, got \(element.typeName)", path, at: element.position)
                }
                specs.append(text)
            }
            return specs
        default:
            throw error("Expected .indexOn to be a string or an Array, got \(value.typeName)", path, at: value.position)
        }
    }
}
