/// A rules unit-test file: a rules document and cases that say which reads and writes it must
/// allow or deny, so rules can be checked before they are deployed (`kindling rules test`).
///
/// The file is JSON (comments allowed, as in rules files):
/// ```
/// {"rules": "database.rules.json" | {"rules": {...}},
///  "cases": [{"name": "owner writes", "auth": {"uid": "alice"} | null,
///             "op": "read" | "set" | "update" | "remove", "path": "/users/alice",
///             "data": <tree before>, "value": <written value, or the update's members>,
///             "query": {"orderBy": "\"$key\"", "limitToFirst": 10}, "now": 1700000000000,
///             "expect": "allow" | "deny"}]}
/// ```
/// Query parameters are REST's: a JSON string is taken as the parameter's raw text
/// (`"orderBy": "\"owner\""`), any other value as its JSON text (`"limitToFirst": 10`).
public struct RulesTestSuite: Sendable {
    public enum Operation: String, Sendable {
        case read
        case set
        case update
        case remove
    }

    /// One case of the file.
    public struct Case: Sendable {
        public var name: String
        public var auth: JSONValue
        public var operation: Operation
        public var path: Path
        public var data: Node
        public var value: JSONValue
        public var query: Query?
        public var now: Int64
        public var expectAllowed: Bool
    }

    public let rules: RulesDocument
    public let cases: [Case]

    /// Reads a test file. `rulesFile` gives the text of a rules file the suite names (nil when it
    /// cannot be read): the core does no I/O, so the caller resolves names as it sees fit.
    public static func parse(_ text: String, rulesFile: (String) -> String?) throws(RulesTestSuiteError) -> RulesTestSuite {
        let json: JSONValue
        do {
            json = RulesTestSuite.plain(try RulesJSONParser.parse(Array(text.utf8)))
        } catch {
            throw RulesTestSuiteError("The test file is not valid JSON: \(error)")
        }
        let rules: RulesDocument
        switch json["rules"] {
        case .string(let name)?:
            guard let source = rulesFile(name) else { throw RulesTestSuiteError("Cannot read the rules file \(name)") }
            do {
                rules = try RulesDocument.parse(source)
            } catch {
                throw RulesTestSuiteError("\(name): \(error)")
            }
        case .object(let members)?:
            do {
                rules = try RulesDocument.parse(JSONWriter.string(.object(members)))
            } catch {
                throw RulesTestSuiteError("The inline rules: \(error.rulePath): \(error.message)")
            }
        default:
            throw RulesTestSuiteError("The test file needs \"rules\": a rules file name or an inline rules document")
        }
        guard case .array(let entries)? = json["cases"] else { throw RulesTestSuiteError("The test file needs a \"cases\" array") }
        var cases: [Case] = []
        for (index, entry) in entries.enumerated() { cases.append(try testCase(entry, index)) }
        return RulesTestSuite(rules: rules, cases: cases)
    }

    private static func testCase(_ json: JSONValue, _ index: Int) throws(RulesTestSuiteError) -> Case {
        guard case .object = json else { throw RulesTestSuiteError("Case \(index + 1) is not an object") }
        let name = json["name"]?.stringValue ?? "case \(index + 1)"
        func fail(_ message: String) -> RulesTestSuiteError { RulesTestSuiteError("Case \"\(name)\": \(message)") }
        guard let opText = json["op"]?.stringValue, let operation = Operation(rawValue: opText) else {
            throw fail("\"op\" must be \"read\", \"set\", \"update\" or \"remove\"")
        }
        let auth = json["auth"] ?? .null
        guard auth.isNull || { if case .object = auth { return true } else { return false } }() else {
            throw fail("\"auth\" must be null or an object")
        }
        guard let pathText = json["path"]?.stringValue else { throw fail("\"path\" must be a string") }
        let expect = json["expect"]?.stringValue
        guard expect == "allow" || expect == "deny" else { throw fail("\"expect\" must be \"allow\" or \"deny\"") }
        var now: Int64 = 0
        if let value = json["now"] {
            guard let milliseconds = value.numberValue?.exactJSONInteger, milliseconds >= 0 else {
                throw fail("\"now\" must be a whole number of milliseconds")
            }
            now = milliseconds
        }
        do {
            let path = try Path(pathText)
            let data = try Node(json: json["data"] ?? .null)
            let value = json["value"] ?? .null
            if operation == .update, case .object = value {
            } else if operation == .update {
                throw fail("\"value\" of an update must be an object of members")
            }
            var query: Query?
            if case .object(let members)? = json["query"] {
                var parameters: [String: String] = [:]
                for member in members {
                    parameters[member.key] = member.value.stringValue ?? JSONWriter.string(member.value)
                }
                query = try Query(restParameters: parameters)
            } else if let other = json["query"], !other.isNull {
                throw fail("\"query\" must be an object of REST query parameters")
            }
            return Case(
                name: name, auth: auth, operation: operation, path: path, data: data, value: value, query: query, now: now,
                expectAllowed: expect == "allow")
        } catch let error as RulesTestSuiteError {
            throw error
        } catch {
            throw fail("\(error)")
        }
    }

    /// The JSON of a test file as plain values.
    private static func plain(_ value: RulesJSON) -> JSONValue {
        switch value.kind {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number): return .number(number)
        case .string(let text, _): return .string(text)
        case .array(let elements): return .array(elements.map(plain))
        case .object(let members): return .object(members.map { JSONMember($0.key, plain($0.value)) })
        }
    }

    /// Runs every case. Failing cases always carry their explain trace; with `explain`, every
    /// case does.
    public func run(explain: Bool = false) -> [RulesTestResult] {
        cases.map { run($0, explain: explain) }
    }

    private func run(_ testCase: Case, explain: Bool) -> RulesTestResult {
        let decision: RuleDecision
        do {
            decision = try decide(testCase)
        } catch {
            return RulesTestResult(
                name: testCase.name, passed: false, allowed: false, expectedAllowed: testCase.expectAllowed, trace: [],
                error: error.message)
        }
        let passed = decision.allowed == testCase.expectAllowed
        return RulesTestResult(
            name: testCase.name, passed: passed, allowed: decision.allowed, expectedAllowed: testCase.expectAllowed,
            trace: passed && !explain ? [] : decision.trace, error: nil)
    }

    private func decide(_ testCase: Case) throws(ValidationError) -> RuleDecision {
        let tree = DataTree(root: testCase.data)
        let serverValues = ServerValues(timestamp: Double(testCase.now))
        let write: Write
        switch testCase.operation {
        case .read:
            return rules.canRead(testCase.path, auth: testCase.auth, root: tree.root, query: testCase.query, now: testCase.now, explain: true)
        case .set: write = try tree.resolveSet(testCase.path, testCase.value, serverValues: serverValues)
        case .remove: write = try tree.resolveSet(testCase.path, .null, serverValues: serverValues)
        case .update:
            guard case .object(let members) = testCase.value, !members.isEmpty else {
                write = .merge(testCase.path, [])
                break
            }
            write = try tree.resolveUpdate(testCase.path, members, serverValues: serverValues)
        }
        return rules.canWrite(write, auth: testCase.auth, old: tree.root, now: testCase.now, explain: true)
    }
}
