import Testing

@testable import KindlingCore

/// Seeded random and mutation fuzzing of the document loader, the expression compiler and the
/// evaluator: nothing may crash, a refusal is always a `RulesError` (the typed throw) placed
/// inside the text, and whatever loads can be evaluated.
struct RulesFuzzTests {
    static let corpus = [
        RulesWorkedExamplesTests.widgetRules,
        RulesWorkedExamplesTests.multiUpdateRules,
        """
        // comment
        { "rules": { "users": { "$uid": { ".read": "auth != null && auth.uid == $uid", /* c */
          ".validate": "newData.hasChildren(['name']) && newData.child('name').val().matches(/^[a-z]{1,3}(x|y)+\\\\d*$/i)",
          "name": { ".validate": "newData.isString() && newData.val().length < 100" }, "$other": { ".validate": false } } },
          "scores": { ".indexOn": ".value", ".read": "query.orderByValue && query.limitToFirst <= 10" } } }
        """,
    ]

    static let alphabet = Array("{}[]\"':,./\\*$!&|=<>()?+-%^09az \n\t.#ndrvuxiq".utf8)

    static let vocabulary = [
        "auth", "root", "data", "newData", "now", "query", "$uid", ".", "child", "(", ")", "'a/b'", "'x'", "1", "0", "-",
        "+", "*", "/", "%", "==", "===", "!=", "<", ">=", "&&", "||", "!", "?", ":", "[", "]", ",", "val", "exists",
        "parent", "hasChildren", "hasChild", "length", "matches", "/a+b?/", "/^x$/i", "contains", "replace", "uid",
        "orderByKey", "limitToFirst", "true", "false", "null", "isString", "getPriority", "'", "\"", ";", "**", "=",
    ]

    @Test func mutatedDocumentsNeverCrashTheLoader() throws {
        var random = SeededGenerator(seed: 0x5EED_0001)
        var loaded = 0
        for round in 0..<3000 {
            var bytes = Array(RulesFuzzTests.corpus[round % RulesFuzzTests.corpus.count].utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = Int.random(in: 0...bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes.insert(RulesFuzzTests.alphabet.randomElement(using: &random)!, at: position)
                case 1 where position < bytes.count: bytes.remove(at: position)
                case 2 where position < bytes.count: bytes[position] = RulesFuzzTests.alphabet.randomElement(using: &random)!
                default:
                    let end = min(bytes.count, position + Int.random(in: 1...12, using: &random))
                    bytes.insert(contentsOf: bytes[position..<end], at: position)
                }
            }
            if try RulesFuzzTests.check(String(decoding: bytes, as: UTF8.self)) { loaded += 1 }
        }
        print("rules fuzz: \(loaded)/3000 mutated documents loaded")
        #expect(loaded > 0)
        #expect(loaded < 3000)
    }

    @Test func randomExpressionsNeverCrashTheCompilerOrTheEvaluator() throws {
        var random = SeededGenerator(seed: 0x5EED_0002)
        var loaded = 0
        for _ in 0..<3000 {
            let count = Int.random(in: 1...12, using: &random)
            let expression = (0..<count).map { _ in RulesFuzzTests.vocabulary.randomElement(using: &random)! }.joined(separator: " ")
            let kind = [".read", ".write", ".validate"].randomElement(using: &random)!
            var members = [JSONMember(kind, .string(expression))]
            if kind != ".write" { members.append(JSONMember(".write", .bool(true))) }
            let level = JSONValue.object([JSONMember("$uid", .object(members))])
            if try RulesFuzzTests.check(JSONWriter.string(.object([JSONMember("rules", level)]))) { loaded += 1 }
        }
        print("rules fuzz: \(loaded)/3000 random expressions loaded")
        #expect(loaded > 0)
    }

    @Test func wellTypedRandomExpressionsLoadAndEvaluate() throws {
        var generator = ExpressionGenerator(random: SeededGenerator(seed: 0x5EED_0003))
        var loaded = 0
        for round in 0..<2000 {
            let kind = round % 2 == 0 ? ".read" : ".validate"
            generator.allowsNewData = kind != ".read"
            let expression = generator.boolean(3)
            var members = [JSONMember(kind, .string(expression))]
            if kind != ".read" { members.append(JSONMember(".write", .bool(true))) }
            let level = JSONValue.object([JSONMember("$uid", .object(members))])
            let text = JSONWriter.string(.object([JSONMember("rules", level)]))
            #expect(throws: Never.self, "\(expression)") { try RulesDocument.parse(text) }
            if try RulesFuzzTests.check(text) { loaded += 1 }
        }
        print("rules fuzz: \(loaded)/2000 well-typed expressions loaded")
        #expect(loaded == 2000)
    }

    /// Random expressions that type-check: every operand has the type its operator needs.
    struct ExpressionGenerator {
        var random: SeededGenerator
        var allowsNewData = false

        mutating func pick(_ count: Int) -> Int { Int.random(in: 0..<count, using: &random) }

        mutating func boolean(_ depth: Int) -> String {
            switch depth <= 0 ? 7 + pick(2) : pick(9) {
            case 0: return "(\(boolean(depth - 1)) && \(boolean(depth - 1)))"
            case 1: return "(\(boolean(depth - 1)) || \(boolean(depth - 1)))"
            case 2: return "!(\(boolean(depth - 1)))"
            case 3: return "\(value(depth - 1)) \(["==", "!=", "===", "!=="][pick(4)]) \(value(depth - 1))"
            case 4: return "\(number(depth - 1)) \(["<", "<=", ">", ">="][pick(4)]) \(number(depth - 1))"
            case 5: return "\(string(depth - 1)).\(["contains", "beginsWith", "endsWith"][pick(3)])(\(string(depth - 1)))"
            case 6: return "(\(boolean(depth - 1)) ? \(boolean(depth - 1)) : \(boolean(depth - 1)))"
            case 7: return "\(snapshot(depth - 1)).\(["exists", "hasChildren", "isString", "isNumber", "isBoolean"][pick(5)])()"
            default:
                return [
                    "true", "\(string(depth - 1)).matches(/^a+b?$/i)", "\(snapshot(depth - 1)).hasChildren(['a', \(string(depth - 1))])",
                    "\(snapshot(depth - 1)).hasChild(\(string(depth - 1)))",
                ][pick(4)]
            }
        }

        mutating func snapshot(_ depth: Int) -> String {
            let roots = allowsNewData ? ["root", "data", "newData"] : ["root", "data"]
            switch depth <= 0 ? 0 : pick(3) {
            case 0: return roots[pick(roots.count)]
            case 1: return "\(snapshot(depth - 1)).child(\(string(depth - 1)))"
            default: return "\(snapshot(depth - 1)).parent()"
            }
        }

        mutating func string(_ depth: Int) -> String {
            switch depth <= 0 ? pick(3) : pick(7) {
            case 0: return ["'a'", "'users'", "'name'", "''"][pick(4)]
            case 1: return "$uid"
            case 2: return ["auth.uid", "auth.token.sub", "auth.foo"][pick(3)]
            case 3: return "\(snapshot(depth - 1)).val()"
            case 4: return "(\(string(depth - 1)) + \(number(depth - 1)))"
            case 5: return "\(string(depth - 1)).replace(\(string(depth - 1)), 'b')"
            default: return "\(string(depth - 1)).\(["toLowerCase", "toUpperCase"][pick(2)])()"
            }
        }

        mutating func number(_ depth: Int) -> String {
            switch depth <= 0 ? pick(2) : pick(6) {
            case 0: return ["1", "0", "2.5", "1e21"][pick(4)]
            case 1: return "now"
            case 2: return "\(string(depth - 1)).length"
            case 3: return "(\(number(depth - 1)) \(["+", "-", "*", "/", "%"][pick(5)]) \(number(depth - 1)))"
            case 4: return "\(snapshot(depth - 1)).val()"
            default: return "-(\(number(depth - 1)))"
            }
        }

        mutating func value(_ depth: Int) -> String {
            switch pick(4) {
            case 0: return string(depth)
            case 1: return number(depth)
            case 2: return "null"
            default: return "\(snapshot(depth)).getPriority()"
            }
        }
    }

    /// Loads `text`; a refusal must lie inside the text. What loads is run on a read and a write.
    /// True when it loaded.
    static func check(_ text: String) throws -> Bool {
        let document: RulesDocument
        do {
            document = try RulesDocument.parse(text)
        } catch {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
            #expect(error.line >= 1 && error.line <= lines, "\(error) in \(text)")
            #expect(error.column >= 1, "\(error) in \(text)")
            return false
        }
        let tree = try Node(jsonText: #"{"users": {"alice": {"name": "abx1"}}, "a": {"b": 2}}"#)
        let auth = RulesHarness.user("alice")
        for path in ["/", "/users/alice", "/a/b/c", "/x"] {
            let path = try Path(path)
            _ = document.canRead(path, auth: auth, root: tree, query: nil, now: 1, explain: true)
            _ = document.canRead(path, auth: .null, root: tree, query: Query(index: .value, limit: QueryLimit(count: 5, fromEnd: false)), now: 1)
            let value = try Node(jsonText: #"{"name": "zz", "b": [1, true, "s"]}"#)
            let write = Write.set(path, value)
            _ = document.canWrite(write, auth: auth, old: tree, now: 1, explain: true)
        }
        return true
    }
}
