import Foundation
import KindlingTesting
import Testing

@testable import KindlingCore

/// targaryen's 186 rule expressions recorded against live Firebase
/// (`shared/conformance/rules-fixtures.json`), each deployed as a `.read` rule at a path made of
/// its wildcards and read as its user, as targaryen's recorder did.
struct RulesFixturesTests {
    /// `rules-fixtures.json` in the conformance folder (`ConformanceData`: `../shared/conformance`
    /// beside the clone, or `KINDLING_CONFORMANCE_DIR`).
    static var fixturesPath: String { ConformanceData.path("rules-fixtures.json") }

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // Skipped, with the reason, when the conformance data is not there (a clone without
    // ../shared); CI sets KINDLING_REQUIRE_CONFORMANCE=1 so that it fails instead.
    @Test(ConformanceData.enabled(ifPresent: "rules-fixtures.json"))
    func everyRecordedFixtureBehavesAsLiveFirebase() throws {
        guard let bytes = FileManager.default.contents(atPath: RulesFixturesTests.fixturesPath) else {
            throw FixtureError("cannot read \(RulesFixturesTests.fixturesPath)")
        }
        let fixtures = try JSONParser.parse([UInt8](bytes))
        guard case .array(let tests)? = fixtures["tests"], let users = fixtures["users"] else {
            throw FixtureError("the fixtures need \"users\" and \"tests\"")
        }
        var failures: [String] = []
        for test in tests {
            let rule = test["rule"]?.stringValue ?? ""
            do {
                if let failure = try RulesFixturesTests.run(test, users: users) { failures.append("\(rule): \(failure)") }
            } catch {
                failures.append("\(rule): \(error)")
            }
        }
        print("rules fixtures: \(tests.count - failures.count)/\(tests.count)")
        for failure in failures { print("  FAILED \(failure)") }
        #expect(tests.count == 186)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// Runs one fixture; nil when it behaves as recorded, else what went wrong.
    static func run(_ test: JSONValue, users: JSONValue) throws -> String? {
        let rule = test["rule"]?.stringValue ?? ""
        let auth = users[test["user"]?.stringValue ?? ""] ?? .null
        var wildcards: [(String, String)] = []
        if case .object(let members)? = test["wildchildren"] {
            wildcards = members.map { ($0.key, $0.value.stringValue ?? "") }
        }
        // {"rules": {"$a": {"$b": {".read": rule}}}}, read at /<a>/<b>.
        var level = JSONValue.object([JSONMember(".read", .string(rule))])
        for (name, _) in wildcards.reversed() { level = .object([JSONMember(name, level)]) }
        let text = JSONWriter.string(.object([JSONMember("rules", level)]))
        let document: RulesDocument
        do {
            document = try RulesDocument.parse(text)
        } catch {
            return test["isValid"]?.boolValue == false ? nil : "refused when it loads: \(error)"
        }
        if test["isValid"]?.boolValue == false { return "loaded, but live Firebase refuses it" }
        let root = try test["data"].map { try Node(json: $0) } ?? .empty
        let path = Path(keys: try wildcards.map { try Key($0.1) })
        let decision = document.canRead(path, auth: auth, root: root, query: try query(test["query"]), now: 0, explain: true)
        let failed = decision.trace.contains { $0.contains("=> error:") }
        if test["failAtRuntime"]?.boolValue == true {
            return failed && !decision.allowed ? nil : "expected a run-time error: \(decision.trace)"
        }
        if failed { return "unexpected run-time error: \(decision.trace)" }
        let expected = test["evaluateTo"]?.boolValue ?? false
        return decision.allowed == expected ? nil : "evaluated to \(decision.allowed), expected \(expected)"
    }

    /// The fixture's query (`{"orderByValue": true, "equalTo": true}`) as a Kindling `Query`.
    static func query(_ json: JSONValue?) throws -> Query? {
        guard let json else { return nil }
        var query = Query()
        if let child = json["orderByChild"]?.stringValue { query.index = .child(try Path(child)) }
        if json["orderByValue"]?.boolValue == true { query.index = .value }
        if json["orderByKey"]?.boolValue == true { query.index = .key }
        if json["orderByPriority"]?.boolValue == true { query.index = .priority }
        func bound(_ value: JSONValue) throws -> Node { value.isNull ? .empty : try Node(json: value) }
        if let value = json["startAt"] { query.start = QueryBound(value: try bound(value), name: .min) }
        if let value = json["endAt"] { query.end = QueryBound(value: try bound(value), name: .max) }
        if let value = json["equalTo"] {
            query.start = QueryBound(value: try bound(value), name: .min)
            query.end = QueryBound(value: try bound(value), name: .max)
        }
        if let count = json["limitToFirst"]?.numberValue { query.limit = QueryLimit(count: Int(count), fromEnd: false) }
        if let count = json["limitToLast"]?.numberValue { query.limit = QueryLimit(count: Int(count), fromEnd: true) }
        return query
    }
}
