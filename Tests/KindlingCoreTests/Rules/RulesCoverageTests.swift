import Foundation
import Testing

@testable import KindlingCore

/// Rules coverage: every expression and sub-expression of a document loaded for it counts its
/// evaluations and the values it gave, at its place in the rules text; what short-circuits is
/// never evaluated and counts 0; a document not loaded for it records nothing.
struct RulesCoverageTests {
    /// A rules document loaded for coverage, its coverage, and a tree to decide against.
    struct Harness {
        let rules: RulesDocument
        var coverage: RulesCoverage?
        var tree: DataTree

        init(_ text: String, data: String = "null") throws {
            rules = try RulesDocument.parse(text, coverage: true)
            coverage = RulesCoverage(rules)
            tree = DataTree(root: try Node(jsonText: data))
        }

        mutating func read(_ path: String, as auth: JSONValue = .null, query: Query? = nil) throws -> Bool {
            rules.canRead(try Path(path), auth: auth, root: tree.root, query: query, now: 0, coverage: &coverage).allowed
        }

        /// Decides a set (not committed).
        mutating func set(_ path: String, _ json: String, as auth: JSONValue = .null) throws -> Bool {
            let write = try tree.resolveSet(try Path(path), try JSONParser.parse(json), serverValues: ServerValues(timestamp: 0))
            return rules.canWrite(write, auth: auth, old: tree.root, now: 0, coverage: &coverage).allowed
        }

        /// The sites whose text is `text` (in `rule` when given), first in the text first.
        func sites(_ text: String, in rule: String? = nil) -> [Int] {
            let sites = coverage?.sites ?? []
            return sites.indices.filter { sites[$0].text == text && (rule == nil || sites[$0].rule == rule) }
                .sorted { sites[$0].start < sites[$1].start }
        }

        /// The one site whose text is `text` (in `rule` when given).
        func site(_ text: String, in rule: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
            let matches = sites(text, in: rule)
            #expect(matches.count == 1, "sites with text \(text): \(matches.count)", sourceLocation: sourceLocation)
            return matches.first ?? 0
        }

        func counts(_ text: String, in rule: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> RulesCoverage.Counts {
            coverage?.counts[site(text, in: rule, sourceLocation: sourceLocation)] ?? RulesCoverage.Counts()
        }

        func evaluations(_ text: String, in rule: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> Int {
            counts(text, in: rule, sourceLocation: sourceLocation).evaluations
        }
    }

    static func user(_ uid: String) -> JSONValue { .object([JSONMember("uid", .string(uid))]) }

    /// Laid out as the Firebase quickstart's `rooms` rules are, so the emulator's published
    /// coverage of that rule (firebase-tools issue 1547: `data.child('owner')` at `10:19`-`10:37`
    /// and so on, lines and columns from 0, ends inclusive) gives the places to expect.
    static let rooms = """
        {
          "rules": {
            "users": {
              "$userId": {
                ".read": true
              }
            },
            "rooms": {
              ".read": false,
              "$roomId": {
                ".write": "data.child('owner').val() == auth.uid || !data.exists()",
                ".validate": "newData.hasChild('owner')"
              }
            }
          }
        }
        """

    @Test func everyExpressionIsASiteAtItsPlaceInTheRulesText() throws {
        let harness = try Harness(Self.rooms)
        let coverage = try #require(harness.coverage)
        let write = "rules/rooms/$roomId/.write"
        // Parts before the whole, each once: the snapshot, the literal argument, each call, each
        // operand and operator, and the rule itself.
        #expect(
            coverage.sites.filter { $0.rule == write }.map(\.text) == [
                "data", "'owner'", "data.child('owner')", "data.child('owner').val()", "auth", "auth.uid",
                "data.child('owner').val() == auth.uid", "data", "data.exists()", "!data.exists()",
                "data.child('owner').val() == auth.uid || !data.exists()",
            ])
        let json = coverage.json(namespace: "quickstart")
        let rule = try #require(json["rules"]?.arrayValue?.first { $0["rule"]?.stringValue == write })
        #expect(rule["location-start"]?.stringValue == "10:19")
        #expect(rule["location-end"]?.stringValue == "10:73")
        let or = try #require(rule["children"]?.arrayValue)
        let equal = or[0]
        #expect(equal["text"]?.stringValue == "data.child('owner').val() == auth.uid")
        let val = try #require(equal["children"]?.arrayValue?[0])
        #expect(val["text"]?.stringValue == "data.child('owner').val()")
        #expect(val["location-start"]?.stringValue == "10:19" && val["location-end"]?.stringValue == "10:43")
        let child = try #require(val["children"]?.arrayValue?[0])
        #expect(child["location-start"]?.stringValue == "10:19" && child["location-end"]?.stringValue == "10:37")
        let owner = try #require(child["children"]?.arrayValue?[1])
        #expect(owner["text"]?.stringValue == "'owner'")
        #expect(owner["location-start"]?.stringValue == "10:30" && owner["location-end"]?.stringValue == "10:36")
        #expect(owner["children"] == nil, "a leaf has no children member")
        let auth = try #require(equal["children"]?.arrayValue?[1]["children"]?.arrayValue?[0])
        #expect(auth["text"]?.stringValue == "auth")
        #expect(auth["location-start"]?.stringValue == "10:48" && auth["location-end"]?.stringValue == "10:51")
        // A boolean written as JSON is a site too, at its literal.
        let read = try #require(json["rules"]?.arrayValue?.first { $0["rule"]?.stringValue == "rules/users/$userId/.read" })
        #expect(read["text"]?.stringValue == "true")
        #expect(read["location-start"]?.stringValue == "4:17" && read["location-end"]?.stringValue == "4:20")
        // Whole rules in the order they are written.
        #expect(
            json["rules"]?.arrayValue?.compactMap { $0["rule"]?.stringValue } == [
                "rules/users/$userId/.read", "rules/rooms/.read", write, "rules/rooms/$roomId/.validate",
            ])
    }

    @Test func countsAndValuesFollowEachEvaluationAndShortCircuitsCountNothing() throws {
        var harness = try Harness(Self.rooms, data: #"{"rooms": {"r1": {"owner": "alice"}}}"#)
        // alice owns r1: `==` is true, so `||` never evaluates `!data.exists()`.
        #expect(try harness.set("/rooms/r1/title", #""hi""#, as: Self.user("alice")))
        #expect(harness.evaluations("data.child('owner').val() == auth.uid || !data.exists()") == 1)
        #expect(harness.evaluations("!data.exists()") == 0)
        #expect(harness.evaluations("data.exists()") == 0)
        let write = "rules/rooms/$roomId/.write"
        #expect(harness.sites("data", in: write).map { harness.coverage?.counts[$0].evaluations } == [1, 0])
        let midway = try #require(harness.coverage?.summary)
        // Of 16: the left operand's 7 parts and the rule, and the three sites of `.validate`.
        #expect(midway.expressions == 16 && midway.evaluated == 11 && midway.percent == 68.75)
        // bob does not: the right operand runs, and is false since r1 exists.
        #expect(try !harness.set("/rooms/r1/title", #""mine""#, as: Self.user("bob")))
        let whole = harness.counts("data.child('owner').val() == auth.uid || !data.exists()")
        #expect(whole.evaluations == 2 && whole.count(of: .bool(true)) == 1 && whole.count(of: .bool(false)) == 1)
        #expect(harness.counts("!data.exists()").values == [RulesCoverage.ValueCount(value: .bool(false), count: 1)])
        #expect(harness.counts("data.child('owner').val()").values == [RulesCoverage.ValueCount(value: .string("alice", truncated: false), count: 2)])
        let uids = harness.counts("auth.uid")
        #expect(uids.count(of: .string("alice", truncated: false)) == 1 && uids.count(of: .string("bob", truncated: false)) == 1)
        // Snapshots are reported where they are, the literal argument as its text.
        #expect(
            harness.counts("data.child('owner')").values == [
                RulesCoverage.ValueCount(value: .snapshot(path: "/rooms/r1/owner", isNew: false), count: 2)
            ])
        #expect(harness.counts("'owner'", in: write).values == [RulesCoverage.ValueCount(value: .string("owner", truncated: false), count: 2)])
        #expect(harness.sites("data", in: write).map { harness.coverage?.counts[$0].evaluations } == [2, 1])
        // The denied write never reached `.validate` (nothing above could grant); the allowed one did.
        let validate = harness.counts("newData.hasChild('owner')")
        #expect(validate.evaluations == 1 && validate.count(of: .bool(true)) == 1)
        #expect(harness.counts("newData").values == [RulesCoverage.ValueCount(value: .snapshot(path: "/rooms/r1", isNew: true), count: 1)])
        // A read of /rooms runs .read false once; /users/x runs the JSON true once.
        #expect(try !harness.read("/rooms"))
        #expect(try harness.read("/users/x"))
        #expect(harness.counts("false").values == [RulesCoverage.ValueCount(value: .bool(false), count: 1)])
        #expect(harness.counts("true").evaluations == 1)
        let summary = try #require(harness.coverage?.summary)
        #expect(summary.expressions == 16 && summary.evaluated == 16 && summary.percent == 100)
        // Booleans: the four whole rules (`.validate` is `hasChild` itself), `==`, `data.exists()`
        // and `!…`: 7.
        #expect(summary.booleans == 7)
        // Seen: users `.read` true; rooms `.read` false; the write's rule true and false; `==`
        // true and false; `data.exists()` true; `!…` false; `hasChild` true: 9 of 14.
        #expect(summary.outcomesSeen == 9 && summary.outcomePercent == 64.28)
    }

    @Test func aTernaryEvaluatesOnlyTheBranchItTakesAndAndsStopAtTheFirstFalse() throws {
        var harness = try Harness(
            """
            {"rules": {
              "a": {".read": "auth != null ? auth.uid == 'x' : now >= 0"},
              "b": {".read": "auth != null && auth.uid == 'x' && now >= 0"}
            }}
            """)
        #expect(try harness.read("/a"))
        #expect(harness.evaluations("auth != null", in: "rules/a/.read") == 1)
        #expect(harness.evaluations("auth.uid == 'x'", in: "rules/a/.read") == 0)
        #expect(harness.evaluations("auth.uid", in: "rules/a/.read") == 0)
        #expect(harness.evaluations("now >= 0", in: "rules/a/.read") == 1)
        #expect(harness.counts("now", in: "rules/a/.read").values.count == 1)
        #expect(try !harness.read("/a", as: Self.user("y")))
        #expect(harness.evaluations("auth.uid == 'x'", in: "rules/a/.read") == 1)
        #expect(harness.evaluations("now >= 0", in: "rules/a/.read") == 1)
        #expect(try !harness.read("/b"))
        #expect(harness.evaluations("auth != null", in: "rules/b/.read") == 1)
        #expect(harness.evaluations("auth.uid == 'x'", in: "rules/b/.read") == 0)
        #expect(harness.evaluations("now >= 0", in: "rules/b/.read") == 0)
        #expect(try harness.read("/b", as: Self.user("x")))
        #expect(harness.evaluations("now >= 0", in: "rules/b/.read") == 1)
        let auth = harness.sites("auth", in: "rules/b/.read")
        #expect(auth.count == 2)
        #expect(
            harness.coverage?.counts[auth[0]].values == [
                RulesCoverage.ValueCount(value: .null, count: 1), RulesCoverage.ValueCount(value: .object, count: 1),
            ])
    }

    @Test func aRunTimeErrorIsTheValueOfEveryExpressionItStopped() throws {
        var harness = try Harness(#"{"rules": {"n": {".read": "data.val().length > 2 || true"}}}"#, data: #"{"n": 5}"#)
        #expect(try !harness.read("/n"))
        let error = RuleCoverageValue.error("length of a non-string")
        #expect(harness.counts("data.val().length").values == [RulesCoverage.ValueCount(value: error, count: 1)])
        #expect(harness.counts("data.val().length > 2").values == [RulesCoverage.ValueCount(value: error, count: 1)])
        #expect(harness.counts("data.val().length > 2 || true").values == [RulesCoverage.ValueCount(value: error, count: 1)])
        #expect(harness.counts("data.val()").values == [RulesCoverage.ValueCount(value: .number(5), count: 1)])
        #expect(harness.evaluations("2") == 0 && harness.evaluations("true") == 0)
    }

    @Test func distinctValuesAreBoundedAndTheRestCounted() throws {
        var harness = try Harness(#"{"rules": {"$k": {".read": "$k.length > 0"}}}"#)
        for index in 0..<(RulesCoverage.maxValuesPerExpression + 5) { #expect(try harness.read("/k\(index)")) }
        let key = harness.counts("$k")
        #expect(key.evaluations == RulesCoverage.maxValuesPerExpression + 5)
        #expect(key.values.count == RulesCoverage.maxValuesPerExpression && key.otherValues == 5)
        #expect(key.values.first?.value == .string("k0", truncated: false))
        #expect(harness.counts("$k.length > 0").values == [RulesCoverage.ValueCount(value: .bool(true), count: 25)])
        let long = String(repeating: "é", count: 200)
        #expect(RuleCoverageValue.string(long) == .string(String(repeating: "é", count: 128), truncated: true))
        #expect(RuleCoverageValue(.number(-0.0), keys: []) == .number(0))
        #expect(RuleCoverageValue(.number(.nan), keys: []) == .nonFinite("NaN"))
    }

    @Test func resetForgetsEverything() throws {
        var harness = try Harness(Self.rooms)
        #expect(try harness.read("/users/a"))
        #expect(harness.coverage?.summary.evaluated == 1)
        harness.coverage?.reset()
        #expect(harness.coverage?.summary.evaluated == 0)
        #expect(harness.coverage?.counts.allSatisfy { $0 == RulesCoverage.Counts() } == true)
    }

    /// Off costs nothing: a document not loaded for coverage has no sites and no coverage can be
    /// made for it; given nil, a loaded one records nothing.
    @Test func withoutCoverageNothingIsRecorded() throws {
        let plain = try RulesDocument.parse(Self.rooms)
        #expect(plain.coverageSites == nil && RulesCoverage(plain) == nil)
        var none: RulesCoverage? = nil
        let instrumented = plain.instrumented()
        #expect(instrumented.coverageSites?.count == 16)
        #expect(instrumented.canRead(try Path("/users/a"), auth: .null, root: .empty, query: nil, now: 0, coverage: &none).allowed)
        #expect(none == nil)
        // A copy keeps its sites, numbered alike, so coverage made from one counts the other's.
        #expect(instrumented.unshared().coverageSites == instrumented.coverageSites)
        #expect(instrumented.instrumented().coverageSites == instrumented.coverageSites)
    }

    /// Probes change no decision and no trace: each worked example and fuzz document decides the
    /// same with and without them (`RulesHarness` checks it for every decision it makes).
    @Test func instrumentedRulesDecideAsPlainOnesDo() throws {
        var harness = try RulesHarness(Self.rooms, data: #"{"rooms": {"r1": {"owner": "alice"}}}"#)
        #expect(try harness.set("/rooms/r1/owner", #""alice""#, as: RulesHarness.user("alice"), commit: false, explain: true).allowed)
        #expect(try !harness.set("/rooms/r1/owner", #""bob""#, as: RulesHarness.user("bob"), commit: false, explain: true).allowed)
        #expect(try !harness.read("/rooms", explain: true).allowed)
    }

    @Test func aStringRuleAcrossLinesAndEscapesIsPlacedInTheRawText() throws {
        // The rule's text has an escaped quote and a raw line break inside the JSON string.
        let text = "{\"rules\": {\".read\": \"auth.uid == \\\"é\\\"\n  || now >= 0\"}}"
        let harness = try Harness(text)
        let coverage = try #require(harness.coverage)
        let literal = try #require(coverage.sites.first { $0.text == "\"é\"" })
        #expect(literal.start == RulesSourcePosition(line: 1, column: 34) && literal.end == RulesSourcePosition(line: 1, column: 39))
        let now = try #require(coverage.sites.first { $0.text == "now" })
        #expect(now.start == RulesSourcePosition(line: 2, column: 6) && now.end == RulesSourcePosition(line: 2, column: 9))
        // The table agrees with the single lookups load errors use.
        let bytes = Array(text.utf8)
        let auth = try #require(text.range(of: "auth")).lowerBound
        let contentStart = text.utf8.distance(from: text.utf8.startIndex, to: auth)
        let start = RulesSourcePosition(line: 1, column: contentStart + 1)
        let decoded = "auth.uid == \"é\"\n  || now >= 0".utf8.count
        let table = RulesJSONParser.positions(in: bytes, contentStart: contentStart, at: start, count: decoded)
        for offset in 0...decoded {
            #expect(table[offset] == RulesJSONParser.position(in: bytes, contentStart: contentStart, at: start, decodedOffset: offset))
        }
    }

    /// Parentheses belong to the expression they enclose, so a part's text is never cut.
    @Test func parenthesesAreTextOfTheExpressionTheyEnclose() throws {
        let harness = try Harness(#"{"rules": {".read": "(auth.uid + 'x').length > 2"}}"#)
        let texts = Set(harness.coverage?.sites.map(\.text) ?? [])
        #expect(texts.contains("(auth.uid + 'x')") && texts.contains("(auth.uid + 'x').length"))
    }

    /// The deepest expressions a document may hold load, run and are freed with probes too, on
    /// a Dispatch queue as a namespace runs them. A probe makes each level two frames of the
    /// evaluator: a debug build needs about 7 MB of stack for these (3.5 MB without coverage),
    /// within a Dispatch thread's 8 MB; a release build's frames are a fraction of that.
    @Test func theDeepestExpressionsRunWithProbes() throws {
        final class Outcome: @unchecked Sendable {
            var allowed: Bool?
            var evaluated: Int?
        }
        let depth = RuleParser.maxNesting - 2
        let text = "{\"rules\": {\".read\": \"" + String(repeating: "!", count: depth) + "true\"}}"
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "rules-coverage-depth").async {
            if var harness = try? Harness(text) {
                outcome.allowed = try? harness.read("/")
                outcome.evaluated = harness.coverage?.summary.evaluated
            }
            done.signal()
        }
        done.wait()
        #expect(outcome.allowed == (depth % 2 == 0))
        #expect(outcome.evaluated == depth + 1)
    }
}

extension JSONValue {
    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}
