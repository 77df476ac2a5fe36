import Testing

@testable import KindlingCore

struct IndexTests {
    func sorted(_ json: String, by index: Index) throws -> [String] {
        try Node(jsonText: json).children.sorted { index.compare($0, $1) < 0 }.map(\.key.string)
    }

    @Test func valueOrderAcrossTypes() throws {
        let json = #"{"o":{"x":1},"s2":"b","s1":"a","n2":10,"n1":-1,"t":true,"f":false,"o2":{"y":0},"n3":2}"#
        #expect(try sorted(json, by: .value) == ["f", "t", "n1", "n3", "n2", "s1", "s2", "o", "o2"])
    }

    @Test func childPathOrderWithMissingValuesFirst() throws {
        let json = #"{"a":{"h":{"v":3}},"b":{"h":{"v":"x"}},"c":{"h":1},"d":{"h":{"v":1}},"e":5,"f":{"h":{"v":1}}}"#
        #expect(try sorted(json, by: .child(Path("h/v"))) == ["c", "e", "d", "f", "a", "b"])
    }

    @Test func priorityOrder() throws {
        let json =
            #"{"d":1,"f":{".value":1,".priority":-1},"b":{".value":1,".priority":2},"g":{"x":1,".priority":2},"c":{".value":1,".priority":10},"e":{".value":1,".priority":"X"},"a":{".value":1,".priority":"x"}}"#
        #expect(try sorted(json, by: .priority) == ["d", "f", "b", "g", "c", "e", "a"])
    }

    @Test func keyOrder() throws {
        #expect(try sorted(#"{"b":1,"a":1,"10":1,"9":1}"#, by: .key) == ["9", "10", "a", "b"])
    }

    @Test func stringValuesCompareByUTF16() throws {
        #expect(try sorted(#"{"x":"\uffff","y":"😀"}"#, by: .value) == ["y", "x"])
    }
}
