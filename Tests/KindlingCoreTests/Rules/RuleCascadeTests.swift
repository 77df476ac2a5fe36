import Testing

@testable import KindlingCore

/// The semantics of rules spec §3: which rules run for reads, writes and updates, in which order,
/// and with which variables.
struct RuleCascadeTests {
    /// The paths of the rules a decision ran, from its trace.
    static func evaluated(_ decision: RuleDecision) -> [String] {
        decision.trace.dropLast().map { String($0.prefix { $0 != ":" }) }
    }

    @Test func aReadStopsAtTheFirstGrantAndNeverRunsDeeperRules() throws {
        let harness = try RulesHarness(
            #"{"rules": {".read": false, "foo": {".read": true, "bar": {".read": "auth.uid > 1"}}}}"#)
        let decision = try harness.read("/foo/bar", explain: true)
        #expect(decision.allowed)
        #expect(RuleCascadeTests.evaluated(decision) == ["/", "/foo"])
    }

    @Test func dataIsTheSnapshotAtTheRulesOwnLevel() throws {
        let harness = try RulesHarness(
            #"{"rules": {"a": {".read": "data.child('open').val() == true", "b": {".read": "data.val() == 'x'"}}}}"#,
            data: #"{"a": {"open": false, "b": "x"}}"#)
        #expect(try harness.read("/a/b").allowed)
        #expect(try !harness.read("/a").allowed)
    }

    @Test func readsAreDeniedByDefaultAndAGrantCoversTheWholeSubtree() throws {
        let harness = try RulesHarness(#"{"rules": {"public": {".read": true, "secret": {".read": false}}}}"#)
        #expect(try !harness.read("/").allowed)
        #expect(try !harness.read("/other").allowed)
        #expect(try harness.read("/public").allowed)
        #expect(try harness.read("/public/secret/deeper").allowed)
        #expect(try !RulesHarness(#"{"rules": {}}"#).read("/").allowed)
    }

    @Test func aLiteralChildBeatsTheWildcardForWritesToo() throws {
        var harness = try RulesHarness(
            #"{"rules": {"items": {"$id": {".write": true}, "locked": {".write": false}}}}"#)
        #expect(try harness.set("/items/a", "1").allowed)
        #expect(try !harness.set("/items/locked", "1").allowed)
    }

    @Test func capturesAreAlwaysStrings() throws {
        let harness = try RulesHarness(
            #"{"rules": {"n": {"$key": {".read": "$key == '1'"}}, "m": {"$key": {".read": "$key == 1"}}}}"#)
        #expect(try harness.read("/n/1").allowed)
        #expect(try !harness.read("/m/1").allowed)
    }

    @Test func capturesAcrossLevelsSeeTheirOwnSegments() throws {
        let harness = try RulesHarness(
            #"{"rules": {"$a": {"$b": {"$c": {".read": "$a + '-' + $b + '-' + $c == 'x-y-z'"}}}}}"#)
        #expect(try harness.read("/x/y/z").allowed)
        #expect(try !harness.read("/x/z/y").allowed)
    }

    @Test func writeRulesCascadeAndThoseBelowThePathNeverRun() throws {
        var harness = try RulesHarness(
            #"{"rules": {".write": false, "foo": {".write": true, "bar": {".write": "auth.uid > 1"}}, "a": {"b": {".write": true}}}}"#)
        let decision = try harness.set("/foo/bar", "1", explain: true)
        #expect(decision.allowed)
        #expect(RuleCascadeTests.evaluated(decision) == ["/", "/foo"])
        #expect(try !harness.set("/a", #"{"b": 1}"#).allowed)
        #expect(try harness.set("/a/b", "1").allowed)
    }

    @Test func validateRunsOnTheWholePathAndEveryWrittenDescendantInOrder() throws {
        var harness = try RulesHarness(
            """
            {"rules": {".write": true, ".validate": true, "foo": {".validate": true, "bar": {".validate": true,
              "baz": {".validate": true, "$x": {".validate": true, "f": {".validate": true}}}}},
              "sibling": {".validate": false}}}
            """, data: #"{"sibling": 1}"#)
        let decision = try harness.set("/foo/bar/baz", #"{"d": 1, "e": {"f": 2}}"#, explain: true)
        #expect(decision.allowed)
        let validated = decision.trace.filter { $0.contains(".validate") }.map { String($0.prefix { $0 != ":" }) }
        #expect(validated == ["/", "/foo", "/foo/bar", "/foo/bar/baz", "/foo/bar/baz/d", "/foo/bar/baz/e", "/foo/bar/baz/e/f"])
    }

    @Test func validateIsSkippedWhereNewDataIsNull() throws {
        var harness = try RulesHarness(
            #"{"rules": {".write": true, "a": {".validate": "newData.isString()", "b": {".validate": false}}}}"#,
            data: #"{"a": {"b": 1, "c": 2}}"#)
        // `a` keeps `c`, so its validate runs (and fails); `b`'s is skipped.
        let partial = try harness.set("/a/b", "null", commit: false, explain: true)
        #expect(!partial.allowed)
        #expect(RuleCascadeTests.evaluated(partial) == ["/", "/a"])
        #expect(try harness.set("/a", "null").allowed)
        var deep = try RulesHarness(#"{"rules": {".write": true, "x": {"$y": {".validate": false}}}}"#, data: #"{"x": {"k": 1}}"#)
        #expect(try deep.set("/x/k", "null").allowed)
        #expect(try !deep.set("/x/k", "2").allowed)
    }

    @Test func aNodeWithoutValidateIsUnconstrained() throws {
        var harness = try RulesHarness(#"{"rules": {".write": true, "widget": {".validate": false}}}"#)
        #expect(try harness.set("/other-widget/size", "1").allowed)
        #expect(try !harness.set("/widget/size", "1").allowed)
    }

    @Test func aRuntimeErrorMakesOnlyThatRuleFalse() throws {
        var harness = try RulesHarness(
            #"{"rules": {".write": "auth.uid.length > 0", "open": {".write": true}, "v": {".validate": "newData.val() > 1"}}}"#)
        let denied = try harness.set("/x", "1", explain: true)
        #expect(!denied.allowed)
        #expect(denied.trace.first?.contains("=> error:") == true)
        #expect(try harness.set("/open", "1").allowed)
        #expect(try !harness.set("/v", #""text""#, as: RulesHarness.user("u")).allowed)
        #expect(try harness.set("/v", "2", as: RulesHarness.user("u")).allowed)
    }

    @Test func everyUpdatePathNeedsItsOwnGrant() throws {
        var harness = try RulesHarness(#"{"rules": {"foo": {"bar": {".write": true}, "$other": {".write": false}}}}"#)
        #expect(try harness.update("/foo", #"{"bar": 1}"#, commit: false).allowed)
        #expect(try !harness.update("/foo", #"{"bar": 1, "baz": 2}"#).allowed)
        #expect(harness.tree.root.isEmpty)
    }

    @Test func anEmptyMergeIsAllowed() throws {
        let rules = try RulesDocument.parse(#"{"rules": {}}"#)
        let write = Write.merge(try Path("/a"), [])
        #expect(rules.canWrite(write, auth: .null, old: .empty, now: 0).allowed)
    }

    @Test func aWildcardChildKeepsItsLocationForParent() throws {
        var harness = try RulesHarness(
            #"{"rules": {"a": {"$x": {".write": "root.child('users').child($x).parent().child('bob').exists() && root.child('users').child($x).exists()"}}}}"#,
            data: #"{"users": {"alice": 1, "bob": 2}}"#)
        #expect(try harness.set("/a/alice", "1", commit: false).allowed)
        #expect(try !harness.set("/a/carol", "1", commit: false).allowed)
    }

    @Test func rootIsTheOldTreeAndNewDataParentsStayInTheNewTree() throws {
        var harness = try RulesHarness(
            """
            {"rules": {"a": {".write": "!root.child('a').exists() && newData.parent().child('b').val() == 2"},
                       "b": {".write": true}}}
            """)
        #expect(try !harness.set("/a", "1", commit: false).allowed)
        #expect(try harness.update("/", #"{"a": 1, "b": 2}"#).allowed)
        #expect(try !harness.update("/", #"{"a": 3, "b": 2}"#).allowed)
    }

    @Test func newDataIsNotAVariableOfReadRules() {
        #expect(throws: RulesError.self) { try RulesDocument.parse(#"{"rules": {".read": "newData.exists()"}}"#) }
        #expect((try? RulesDocument.parse(#"{"rules": {".write": "newData.exists()", ".validate": "newData.exists()"}}"#)) != nil)
    }

    @Test func queryRulesSeeTheListensQuery() throws {
        let harness = try RulesHarness(
            """
            {"rules": {"scores": {".read": "query.orderByValue && query.startAt == 10 && query.endAt == null"},
                       "keys": {".read": "query.orderByKey && query.startAfter == 'm' && query.endBefore == 'q'"},
                       "last": {".read": "query.limitToLast == 5 && query.limitToFirst == null"},
                       "prio": {".read": "query.orderByPriority && query.startAt == 3"}}}
            """)
        let scores = Query(index: .value, start: QueryBound(value: Node(.number(10)), name: .min))
        #expect(try harness.read("/scores", query: scores).allowed)
        #expect(try !harness.read("/scores").allowed)
        let keys = Query(
            index: .key, start: QueryBound(value: Node(.string("m")), name: .max, inclusive: false),
            end: QueryBound(value: Node(.string("q")), name: .min, inclusive: false))
        #expect(try harness.read("/keys", query: keys).allowed)
        #expect(try harness.read("/last", query: Query(index: .key, limit: QueryLimit(count: 5, fromEnd: true))).allowed)
        #expect(try harness.read("/prio", query: Query(start: QueryBound(value: Node(.number(3)), name: .min))).allowed)
    }

    @Test func snapshotMethodsReadTheTree() throws {
        let data = #"{"p": {".value": 1, ".priority": "high"}, "o": {"a": true, "s": "x"}}"#
        let harness = try RulesHarness(
            """
            {"rules": {".read": "root.child('p').getPriority() == 'high' && root.child('p').isNumber() && root.child('o/a').isBoolean()
              && root.child('o').child('s').isString() && root.hasChild('o/s') && root.child('o').hasChildren(['a', 's'])
              && root.child('o').hasChildren() && !root.child('o/s').hasChildren() && root.child('o').val() != null
              && root.child('o').val() == root.child('o').val() && root.child('o/a').parent().parent().hasChild('p')
              && root.child('o/s').val().length == 1 && root.child('o/s').val().toUpperCase() == 'X'
              && 'a.b.c'.replace('.', ',') == 'a,b,c' && 'Hello'.beginsWith('He') && 'Hello'.endsWith('lo')
              && 'Hello'.contains('ell') && 'HELLO'.toLowerCase() == 'hello' && 'a😀'.length == 3 && 7 % 4 == 3 && -(2) == -2
              && root.child('o' + '/a').parent().hasChild('s') && root.child('o').child('s').parent().parent().hasChild('p')
              && root.child('o').child('s' + '').parent().hasChild('a')"}}
            """, data: data)
        let decision = try harness.read("/", explain: true)
        #expect(decision.allowed, "\(decision.trace)")
    }

    @Test func aWriteNoRuleBelowCanGrantIsDeniedAndItsTraceStillRunsTheValidates() throws {
        var harness = try RulesHarness(
            #"""
            {"rules": {"a": {".write": false, ".validate": "newData.hasChildren()", "b": {".write": true, ".validate": true},
              "c": {".validate": "newData.isString()"}}, "w": {"$w": {".validate": "newData.hasChildren()", "x": {".write": true}}}}}
            """#)
        #expect(try harness.set("/a/b", "1", commit: false).allowed)
        #expect(try harness.set("/w/q/x", "1", commit: false).allowed)
        #expect(try !harness.set("/a/c", "1", commit: false).allowed)
        #expect(try !harness.set("/a/c", #""s""#, commit: false).allowed)
        let explained = try harness.set("/a/c", #""s""#, commit: false, explain: true)
        #expect(!explained.allowed)
        #expect(explained.trace.contains { $0.hasPrefix("/a/c: .validate") }, "\(explained.trace)")
    }
}
