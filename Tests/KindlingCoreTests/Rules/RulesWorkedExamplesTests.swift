import Testing

@testable import KindlingCore

/// The ten worked examples of rules spec §12, one test each.
struct RulesWorkedExamplesTests {
    let alice = RulesHarness.user("alice")
    let bob = RulesHarness.user("bob")

    @Test func example1AShallowGrantCannotBeRevokedDeeper() throws {
        let rules = """
            { "rules": { "foo": { ".read": "data.child('baz').val() === true", "bar": { ".read": false } } } }
            """
        #expect(try RulesHarness(rules, data: #"{"foo": {"baz": true, "bar": {"x": 1}}}"#).read("/foo/bar").allowed)
        #expect(try !RulesHarness(rules, data: #"{"foo": {"baz": false, "bar": {"x": 1}}}"#).read("/foo/bar").allowed)
    }

    @Test func example2RulesAreNotFilters() throws {
        let harness = try RulesHarness(#"{ "rules": { "records": { "rec1": { ".read": true }, "rec2": { ".read": false } } } }"#)
        #expect(try !harness.read("/records").allowed)
        #expect(try harness.read("/records/rec1").allowed)
    }

    @Test func example3PerUserDataWithACapture() throws {
        var harness = try RulesHarness(
            """
            { "rules": { "users": { "$uid": {
                ".read":  "auth != null && auth.uid === $uid",
                ".write": "auth != null && auth.uid === $uid" } } } }
            """)
        #expect(try harness.set("/users/alice/name", #""Alice""#, as: alice, commit: false).allowed)
        #expect(try !harness.set("/users/alice/name", #""Alice""#, as: bob, commit: false).allowed)
        #expect(try !harness.set("/users/alice/name", #""Alice""#, commit: false).allowed)
        #expect(try !harness.read("/users", as: alice).allowed)
    }

    static let widgetRules = """
        { "rules": { ".write": true,
          "widget": { ".validate": "newData.hasChildren(['color', 'size'])",
            "size":  { ".validate": "newData.isNumber() && newData.val() >= 0 && newData.val() <= 99" },
            "color": { ".validate": "root.child('valid_colors/' + newData.val()).exists()" } } } }
        """

    @Test func example4ValidateRunsAtEveryLevelIncludingAncestors() throws {
        var harness = try RulesHarness(RulesWorkedExamplesTests.widgetRules, data: #"{"valid_colors": {"blue": true}}"#)
        #expect(try !harness.set("/widget", #""foo""#).allowed)
        #expect(try !harness.set("/widget", #"{"size": 22}"#).allowed)
        #expect(try !harness.set("/widget", #"{"size": "foo", "color": "red"}"#).allowed)
        #expect(try harness.set("/widget", #"{"size": 21, "color": "blue"}"#).allowed)
        #expect(try harness.set("/widget/size", "99").allowed)
        var empty = try RulesHarness(RulesWorkedExamplesTests.widgetRules)
        #expect(try !empty.set("/widget/size", "99").allowed)
    }

    @Test func example5DeletesSkipValidationOnlyWhereDataDisappears() throws {
        let data = #"{"widget": {"size": 21, "color": "blue"}, "valid_colors": {"blue": true}}"#
        var harness = try RulesHarness(RulesWorkedExamplesTests.widgetRules, data: data)
        #expect(try harness.set("/widget", "null", commit: false).allowed)
        #expect(try !harness.set("/widget/color", "null", commit: false).allowed)
        // The variant with .write rules instead: .write below the written path is never run.
        var variant = try RulesHarness(
            """
            { "rules": { ".write": true,
              "widget": { ".write": "newData.hasChildren(['color', 'size'])",
                "size":  { ".write": "newData.isNumber() && newData.val() >= 0 && newData.val() <= 99" },
                "color": { ".write": "root.child('valid_colors/' + newData.val()).exists()" } } } }
            """, data: data)
        #expect(try variant.set("/widget", #"{"size": 99999, "color": "red"}"#).allowed)
    }

    @Test func example6OtherClosesTheSchemaAndALiteralBeatsTheWildcard() throws {
        var harness = try RulesHarness(
            """
            { "rules": { ".write": true,
              "widget": { "title": { ".validate": true }, "color": { ".validate": true },
                          "$other": { ".validate": false } },
              "messages": { "$message": { ".read": true }, "message1": { ".read": false } } } }
            """)
        #expect(try !harness.set("/widget", #"{"title": "x", "extra": 1}"#).allowed)
        #expect(try harness.update("/widget", #"{"title": "y"}"#).allowed)
        #expect(try harness.read("/messages/message2").allowed)
        #expect(try !harness.read("/messages/message1").allowed)
    }

    @Test func example7QueryBasedReadRules() throws {
        let harness = try RulesHarness(
            """
            { "rules": {
              "baskets":  { ".read": "auth.uid !== null && query.orderByChild === 'owner' && query.equalTo === auth.uid" },
              "messages": { ".read": "query.orderByKey && query.limitToFirst <= 1000" } } }
            """)
        let owner = Query(
            index: .child(try Path("owner")), start: QueryBound(value: Node(.string("alice")), name: .min),
            end: QueryBound(value: Node(.string("alice")), name: .max))
        #expect(try harness.read("/baskets", as: alice, query: owner).allowed)
        #expect(try !harness.read("/baskets", as: alice).allowed)
        #expect(try !harness.read("/baskets", query: owner).allowed)
        #expect(try !harness.read("/messages").allowed)
        #expect(try harness.read("/messages", query: Query(limit: QueryLimit(count: 1000, fromEnd: false))).allowed)
        #expect(try harness.read("/messages", query: Query(index: .key, limit: QueryLimit(count: 1000, fromEnd: false))).allowed)
        #expect(try !harness.read("/messages", query: Query(index: .key, limit: QueryLimit(count: 1001, fromEnd: false))).allowed)
    }

    @Test func example8ARuntimeErrorDeniesEvenWithOrTrue() throws {
        let harness = try RulesHarness(
            #"{ "rules": { "$any": { ".read": "root.child('banned/' + auth.uid).exists() == false || true" } } }"#)
        #expect(try !harness.read("/x").allowed)
        #expect(try harness.read("/x", as: RulesHarness.user("bob@example.com")).allowed)
        let fixed = try RulesHarness(
            #"{ "rules": { "$any": { ".read": "auth != null && !root.child('banned/' + auth.uid).exists()" } } }"#,
            data: #"{"banned": {"eve": true}}"#)
        #expect(try !fixed.read("/x").allowed)
        #expect(try fixed.read("/x", as: bob).allowed)
        #expect(try !fixed.read("/x", as: RulesHarness.user("eve")).allowed)
    }

    @Test func example9ServerTimestampsAndNow() throws {
        var harness = try RulesHarness(
            """
            { "rules": { ".write": false,
              "foo": { ".write": "newData.val() == now" },
              "posts": { "$post": { ".write": "auth != null",
                 "created": { ".validate": "newData.isNumber() && newData.val() == (data.val() == null ? now : data.val())" } } } } }
            """)
        #expect(try harness.set("/foo", #"{".sv": "timestamp"}"#).allowed)
        #expect(try !harness.set("/foo", "1").allowed)
        let x = RulesHarness.user("x")
        #expect(try harness.set("/posts/p1", #"{"created": {".sv": "timestamp"}}"#, as: x).allowed)
        harness.now += 1000
        #expect(try !harness.update("/posts/p1", #"{"created": {".sv": "timestamp"}}"#, as: x).allowed)
    }

    static let multiUpdateRules = """
        { "rules": { ".write": "auth != null",
          "secret": { "$uid": { ".validate": "newData.isString() && newData.parent().parent().child('users').child($uid).val() != null" } },
          "users":  { "$uid": { ".validate": "newData.hasChildren(['name']) && newData.parent().parent().child('secret').child($uid).val() != null",
                                "name": { ".validate": "newData.isString()" }, "$other": { ".validate": false } } },
          "grid": { ".write": false, "$a": { "$b": { "$c": { ".write": "$a != $b && $b != $c" } } } } } }
        """

    @Test func example10MultiPathUpdatesAreAtomicAndSeeTheMergedTree() throws {
        var harness = try RulesHarness(RulesWorkedExamplesTests.multiUpdateRules)
        #expect(try !harness.set("/users/alice", #"{"name": "Alice"}"#, as: alice, commit: false).allowed)
        #expect(try harness.update("/", #"{"users/alice": {"name": "Alice"}, "secret/alice": "s3cr3t"}"#, as: alice, commit: false).allowed)
        #expect(try harness.update("/", #"{"grid/foo/bar/baz": true, "grid/foo/bar/qux": true}"#, as: alice, commit: false).allowed)

        let gridOnly = #"{ "rules": { "grid": { ".write": false, "$a": { "$b": { "$c": { ".write": "$a != $b && $b != $c" } } } } } }"#
        var grid = try RulesHarness(gridOnly)
        #expect(try grid.update("/grid", #"{"foo/bar/baz": true, "foo/bar/qux": true}"#, commit: false).allowed)
        #expect(try !grid.update("/grid", #"{"foo/bar/baz": true, "foo/bar/bar": true}"#).allowed)
        #expect(grid.tree.root.isEmpty)
    }
}
