import Testing

@testable import KindlingCore

struct NodeJSONTests {
    func node(_ json: String) throws(ValidationError) -> Node { try Node(jsonText: json) }

    @Test func emptyObjectsAreNull() throws {
        #expect(try node("{}").isEmpty)
        #expect(try node(#"{"a":{},"b":{"c":null}}"#).isEmpty)
        #expect(try node(#"{"a":{},"b":1}"#).jsonText() == #"{"b":1}"#)
    }

    @Test func arraysBecomeIntegerKeyedChildren() throws {
        let n = try node(#"["a",null,"c"]"#)
        #expect(n.childCount == 2)
        #expect(n.child("2").leaf == .string("c"))
        #expect(n.jsonText() == #"["a",null,"c"]"#)
        #expect(n.jsonText(format: .export) == #"{"0":"a","2":"c"}"#)
    }

    @Test func arrayRenderingRule() throws {
        #expect(try node(#"{"0":"a","1":"b"}"#).jsonText() == #"["a","b"]"#)
        #expect(try node(#"{"1":"b","2":"c"}"#).jsonText() == #"[null,"b","c"]"#)
        #expect(try node(#"{"3":"d","1":"b"}"#).jsonText() == #"[null,"b",null,"d"]"#)
        // Largest key not below twice the count: stays an object.
        #expect(try node(#"{"4":"e","1":"b"}"#).jsonText() == #"{"1":"b","4":"e"}"#)
        // Keys that are not canonical non-negative integers: objects.
        #expect(try node(#"{"0":"a","01":"b"}"#).jsonText() == #"{"0":"a","01":"b"}"#)
        #expect(try node(#"{"-1":"a","0":"b"}"#).jsonText() == #"{"-1":"a","0":"b"}"#)
        #expect(try node(#"{"0":"a","x":"b"}"#).jsonText() == #"{"0":"a","x":"b"}"#)
    }

    @Test func prioritiesAndTheExportForm() throws {
        let leaf = try node(#"{".value":5,".priority":"p"}"#)
        #expect(leaf.leaf == .number(5))
        #expect(leaf.priority == .string("p"))
        #expect(leaf.jsonText() == "5")
        #expect(leaf.jsonText(format: .export) == #"{".value":5,".priority":"p"}"#)
        let parent = try node(#"{"b":{".value":1,".priority":2},"a":"x",".priority":1.5}"#)
        #expect(parent.jsonText() == #"{"a":"x","b":1}"#)
        #expect(parent.jsonText(format: .export) == #"{"a":"x","b":{".value":1,".priority":2},".priority":1.5}"#)
        #expect(try node(parent.jsonText(format: .export)) == parent)
    }

    @Test func priorityOnAnEmptyNodeIsDropped() throws {
        #expect(try node(#"{".priority":1}"#).isEmpty)
        #expect(try node(#"{"a":null,".priority":1}"#).isEmpty)
        #expect(Node.empty.withPriority(.number(1)).priority == nil)
    }

    @Test func invalidShapesAreRefusedWithTheirLocation() throws {
        func refusal(_ json: String) -> ValidationError? {
            do throws(ValidationError) { _ = try node(json); return nil } catch { return error }
        }
        #expect(refusal(#"{"a":{"b.c":1}}"#)?.message.contains("/a/b.c") == true)
        #expect(refusal(#"{"a":{"b.c":1}}"#)?.kind == .invalidKey)
        #expect(refusal(#"{".value":1,"x":2}"#)?.kind == .invalidData)
        #expect(refusal(#"{".priority":true,"x":2}"#)?.kind == .invalidPriority)
        #expect(refusal(#"{".priority":{"a":1},"x":2}"#)?.kind == .invalidPriority)
        #expect(refusal(#"{"a":{".sv":"timestamp"}}"#)?.kind == .invalidServerValue)
        #expect(refusal(#"{".foo":1}"#)?.kind == .invalidKey)
    }

    @Test func depthIsLimitedTo32Keys() throws {
        func nested(_ depth: Int) -> String {
            String(repeating: #"{"k":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        }
        _ = try node(nested(32))
        #expect(throws: ValidationError.self) { try node(nested(33)) }
        #expect(throws: ValidationError.self) {
            try Node(json: JSONParser.parse(nested(2)), at: Path((0..<31).map { "p\($0)" }.joined(separator: "/")))
        }
    }

    @Test func stringsUpTo10MB() throws {
        let limit = String(repeating: "x", count: Node.maxStringBytes)
        _ = try Node(json: .string(limit))
        #expect(throws: ValidationError.self) { try Node(json: .string(limit + "x")) }
    }

    @Test func childOrderInOutput() throws {
        #expect(try node(#"{"b":1,"a":2,"10":3,"9":4}"#).jsonText() == #"{"9":4,"10":3,"a":2,"b":1}"#)
    }

    @Test func duplicateMembersLastWins() throws {
        #expect(try node(#"{"a":1,"a":null}"#).isEmpty)
        #expect(try node(#"{"a":null,"a":2}"#).jsonText() == #"{"a":2}"#)
    }
}
