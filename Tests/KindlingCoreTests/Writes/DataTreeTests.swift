import Testing

@testable import KindlingCore

struct DataTreeTests {
    let clock = ServerValues(timestamp: 1_795_263_912_764)

    func tree(_ json: String) throws -> DataTree { DataTree(root: try Node(jsonText: json)) }

    func set(_ tree: inout DataTree, _ path: String, _ json: String) throws(ValidationError) {
        tree.apply(try tree.resolveSet(Path(path), JSONParser.parse(json), serverValues: clock))
    }

    func update(_ tree: inout DataTree, _ path: String, _ json: String) throws(ValidationError) {
        guard case .object(let members) = try JSONParser.parse(json) else { throw ValidationError(.invalidUpdate, "not an object") }
        tree.apply(try tree.resolveUpdate(Path(path), members, serverValues: clock))
    }

    @Test func setReplacesAndRemovesPriority() throws {
        var t = try tree(#"{"a":{"b":1,".priority":5},"c":2}"#)
        try set(&t, "a", #"{"x":true}"#)
        #expect(t.root.jsonText(format: .export) == #"{"a":{"x":true},"c":2}"#)
        try set(&t, "a/x", "null")
        #expect(t.root.jsonText() == #"{"c":2}"#)
        try set(&t, "c", "null")
        #expect(t.root.isEmpty)
    }

    @Test func removingTheLastChildRemovesEveryEmptiedParent() throws {
        var t = try tree(#"{"a":{"b":{"c":{"d":1}}},"z":1}"#)
        try set(&t, "a/b/c/d", "null")
        #expect(t.root.jsonText() == #"{"z":1}"#)
    }

    @Test func writingBelowALeafKeepsItsPriority() throws {
        var t = try tree(#"{"a":{".value":"leaf",".priority":7}}"#)
        try set(&t, "a/b", "1")
        #expect(t.root.jsonText(format: .export) == #"{"a":{"b":1,".priority":7}}"#)
    }

    @Test func priorityWrites() throws {
        var t = try tree(#"{"a":{"b":1}}"#)
        try set(&t, "a/.priority", "3")
        #expect(t.node(at: try Path("a")).priority == .number(3))
        try set(&t, "a/.priority", "null")
        #expect(t.node(at: try Path("a")).priority == nil)
        try set(&t, "missing/.priority", "3")
        #expect(t.node(at: try Path("missing")).isEmpty)
        #expect(throws: ValidationError.self) { try t.resolveSet(Path("a/.priority"), .bool(true), serverValues: clock) }
        try set(&t, "a/.priority", #"{".sv":"timestamp"}"#)
        #expect(t.node(at: try Path("a")).priority == .number(clock.timestamp))
    }

    @Test func updateIsAMultiPathMerge() throws {
        var t = try tree(#"{"users":{"ada":{"name":"Ada","since":1840},"bob":{"name":"Bob"}},"count":1}"#)
        try update(&t, "users", #"{"ada/since":1843,"bob":null,"cy/name":"Cy"}"#)
        #expect(t.root.jsonText() == #"{"count":1,"users":{"ada":{"name":"Ada","since":1843},"cy":{"name":"Cy"}}}"#)
    }

    @Test func updateKeepsTheUpdatedNodesPriority() throws {
        var t = try tree(#"{"a":{"b":1,".priority":9}}"#)
        try update(&t, "a", #"{"c":2}"#)
        #expect(t.root.jsonText(format: .export) == #"{"a":{"b":1,"c":2,".priority":9}}"#)
        try update(&t, "a", #"{".priority":"p","b":null}"#)
        #expect(t.root.jsonText(format: .export) == #"{"a":{"c":2,".priority":"p"}}"#)
    }

    @Test func overlappingOrInvalidUpdatesChangeNothing() throws {
        var t = try tree(#"{"a":{"b":1}}"#)
        let before = t.root
        for bad in [
            #"{"a":1,"a/b":2}"#, #"{"x/y":1,"x":2}"#, #"{"ok":1,"bad.key":2}"#, #"{}"#, #"{"ok":1,"n":{".sv":"nope"}}"#,
            #"{"a//":1,"/a":2}"#, #"{"":1}"#,
        ] {
            #expect(throws: ValidationError.self, "\(bad)") { try update(&t, "", bad) }
            #expect(t.root == before)
        }
        do throws(ValidationError) {
            try update(&t, "", #"{"a":1,"a/b":2}"#)
        } catch {
            #expect(error.kind == .invalidUpdate)
            #expect(error.message.contains("/a is an ancestor of /a/b"))
        }
    }

    @Test func serverTimestampAnywhere() throws {
        var t = DataTree()
        try set(&t, "m", #"{"at":{".sv":"timestamp"},"deep":{"er":{".sv":"timestamp"}},".priority":{".sv":"timestamp"}}"#)
        let expected = JSNumberFormat.string(clock.timestamp)
        #expect(t.root.jsonText() == #"{"m":{"at":\#(expected),"deep":{"er":\#(expected)}}}"#)
        #expect(t.node(at: try Path("m")).priority == .number(clock.timestamp))
    }

    @Test func incrementSemantics() throws {
        var t = try tree(#"{"n":5,"s":"text","o":{"x":1},"f":0.5}"#)
        let inc = #"{".sv":{"increment":2}}"#
        try set(&t, "n", inc)
        try set(&t, "s", inc)
        try set(&t, "o", inc)
        try set(&t, "missing", inc)
        try set(&t, "f", #"{".sv":{"increment":0.25}}"#)
        #expect(t.root.jsonText() == #"{"f":0.75,"missing":2,"n":7,"o":2,"s":2}"#)
        try update(&t, "", #"{"n":{".sv":{"increment":-10}},"lit":5}"#)
        #expect(t.node(at: try Path("n")).leaf == .number(-3))
    }

    @Test func incrementStaysExactUpTo2To53() throws {
        var t = try tree(#"{"n":9007199254740990}"#)
        try set(&t, "n", #"{".sv":{"increment":1}}"#)
        #expect(t.root.jsonText() == #"{"n":9007199254740991}"#)
        try set(&t, "n", #"{".sv":{"increment":1}}"#)
        #expect(t.root.jsonText() == #"{"n":9007199254740992}"#)
        try set(&t, "n", #"{".sv":{"increment":1}}"#)
        #expect(t.node(at: try Path("n")).leaf == .number(9_007_199_254_740_992))
    }

    @Test func invalidServerValues() throws {
        let t = DataTree()
        for bad in [#"{".sv":"now"}"#, #"{".sv":{"increment":"1"}}"#, #"{".sv":{"incr":1}}"#, #"{".sv":"timestamp","x":1}"#] {
            #expect(throws: ValidationError.self, "\(bad)") { try t.resolveSet(Path("a"), JSONParser.parse(bad), serverValues: clock) }
        }
    }

    @Test func compareAndSetUsesHashes() throws {
        let t = try tree(#"{"count":10}"#)
        #expect(t.matches(hash: "+r5aI9HvKKagELki8SYKBk0q7D4=", at: try Path("count")))
        #expect(!t.matches(hash: "", at: try Path("count")))
        #expect(t.matches(hash: "", at: try Path("missing")))
        #expect(!t.matches(hash: "+r5aI9HvKKagELki8SYKBk0q7D4=", at: try Path("missing")))
    }

    @Test func snapshotsAreUnaffectedByLaterWrites() throws {
        var t = try tree(#"{"a":{"b":1},"c":{"d":2}}"#)
        let snapshot = t.root
        try set(&t, "a/b", "5")
        try set(&t, "c", "null")
        try set(&t, "e", "1")
        #expect(snapshot.jsonText() == #"{"a":{"b":1},"c":{"d":2}}"#)
        #expect(t.root.jsonText() == #"{"a":{"b":5},"e":1}"#)
    }
}
