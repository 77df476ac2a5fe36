import Testing

@testable import KindlingCore

struct QueryTests {
    static let dinos = #"""
        {"linhenykus":{"height":0.6,"ratings":{"pos":1}},"pterodactyl":{"height":0.6,"ratings":{"pos":2}},
         "lambeosaurus":{"height":2.1,"ratings":{"pos":6}},"triceratops":{"height":3,"ratings":{"pos":4}},
         "stegosaurus":{"height":4,"ratings":{"pos":5}},"bruhathkayosaurus":{"height":25,"ratings":{"pos":3}}}
        """#

    func keys(_ query: Query, _ json: String = QueryTests.dinos) throws -> [String] {
        query.window(of: try Node(jsonText: json)).map(\.key.string)
    }

    func rest(_ parameters: [String: String]) throws -> Query { try Query(restParameters: parameters) }

    @Test func restExamplesFromTheAdminIntegrationSuite() throws {
        #expect(try keys(rest(["orderBy": #""height""#, "limitToFirst": "2"])) == ["linhenykus", "pterodactyl"])
        #expect(try keys(rest(["orderBy": #""height""#, "startAt": "2.5", "endAt": "5"])) == ["triceratops", "stegosaurus"])
        #expect(try keys(rest(["orderBy": #""height""#, "equalTo": "0.6"])) == ["linhenykus", "pterodactyl"])
        #expect(try keys(rest(["orderBy": #""ratings/pos""#, "startAt": "4"])) == ["triceratops", "stegosaurus", "lambeosaurus"])
        #expect(try keys(rest(["orderBy": #""$key""#, "limitToFirst": "2"])) == ["bruhathkayosaurus", "lambeosaurus"])
        let scores = #"{"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#
        #expect(try keys(rest(["orderBy": #""$value""#, "limitToLast": "2"]), scores) == ["linhenykus", "pterodactyl"])
    }

    @Test func restErrors() {
        func message(_ parameters: [String: String]) -> String? {
            do throws(ValidationError) { _ = try Query(restParameters: parameters); return nil } catch { return error.message }
        }
        #expect(message(["limitToFirst": "1"]) == "orderBy must be defined when other query parameters are defined")
        #expect(message(["orderBy": "height"]) == "orderBy must be a valid JSON encoded path")
        #expect(message(["orderBy": #""height""#, "equalTo": "abc"]) == "Constraint index field must be a JSON primitive")
        #expect(message(["orderBy": #""height""#, "equalTo": #"{"a":1}"#]) == "Constraint index field must be a JSON primitive")
        #expect(message(["orderBy": #""height""#, "limitToFirst": "1", "limitToLast": "1"]) != nil)
        #expect(message(["orderBy": #""height""#, "limitToFirst": "-1"]) != nil)
        #expect(message(["orderBy": #""$key""#, "startAt": "1"]) != nil)
        #expect(message(["orderBy": #""a.b""#]) == "orderBy must be a valid JSON encoded path")
        for limit in ["+5", "-0", " 5", "5 ", "", "0x5", "٥"] {
            #expect(message(["orderBy": #""height""#, "limitToFirst": limit]) == "limitToFirst must be a non-negative integer", "\(limit)")
        }
        #expect(message(["orderBy": #""height""#, "limitToFirst": "007"]) == nil)
    }

    /// A bound's string may start with a combining mark: the quote before it still ends the
    /// value (as bytes, not as characters), and a key after the comma is read whole.
    @Test func boundsAreSplitByBytes() throws {
        let json = #"{"a":"\u0301a","b":"\u0301a","c":"\u0302"}"#
        #expect(try keys(rest(["orderBy": #""$value""#, "equalTo": #""\#u{301}a","b""#]), json) == ["b"])
        #expect(try keys(rest(["orderBy": #""$value""#, "startAt": #""\#u{301}a","\#u{301}k""#]), json) == ["c"])
    }

    @Test func mixedTypeOrderAndRanges() throws {
        let json = #"{"a":{"v":"x"},"b":{"v":3.5},"c":{"v":true},"d":{"v":null,"x":0},"e":{"v":{"o":1}},"f":{"v":4},"g":{"w":1}}"#
        let order = Query(index: .child(try Path("v")))
        #expect(try keys(order, json) == ["d", "g", "c", "b", "f", "a", "e"])
        #expect(try keys(rest(["orderBy": #""v""#, "startAt": "3.5"]), json) == ["b", "f", "a", "e"])
        #expect(try keys(rest(["orderBy": #""v""#, "endAt": "3.5"]), json) == ["d", "g", "c", "b"])
        #expect(try keys(rest(["orderBy": #""v""#, "startAfter": "3.5"]), json) == ["f", "a", "e"])
        #expect(try keys(rest(["orderBy": #""v""#, "endBefore": "4"]), json) == ["d", "g", "c", "b"])
        #expect(try keys(rest(["orderBy": #""v""#, "equalTo": "null"]), json) == ["d", "g"])
    }

    @Test func keyNamesBreakTies() throws {
        let json = #"{"a":1,"b":1,"c":1,"d":2}"#
        let index = Index.value
        #expect(try keys(Query(index: index, start: QueryBound(value: Node(.number(1)), name: .key("b"))), json) == ["b", "c", "d"])
        #expect(try keys(Query(index: index, start: QueryBound(value: Node(.number(1)), name: .key("b"), inclusive: false)), json) == ["c", "d"])
        #expect(try keys(Query(index: index, end: QueryBound(value: Node(.number(1)), name: .key("b"))), json) == ["a", "b"])
        #expect(try keys(rest(["orderBy": #""$value""#, "startAt": #"1,"b""#]), json) == ["b", "c", "d"])
    }

    @Test func wireObjectsRoundTrip() throws {
        let samples = [
            #"{"l":2,"vf":"r","i":"score"}"#,
            #"{"sp":"a","sin":false,"ep":"d","ein":false,"i":".key"}"#,
            #"{"sp":10,"sin":true,"ep":10,"ein":true,"i":"score"}"#,
            #"{"sp":1,"sn":"[MAX_NAME]","sin":false}"#,
            #"{"ep":10,"en":"[MIN_NAME]","ein":false}"#,
            #"{"sp":null,"sin":true,"ep":null,"ein":true,"l":2,"vf":"l","i":".value"}"#,
            #"{"sp":1,"sn":"k","sin":true}"#,
        ]
        for text in samples {
            let query = try Query(wire: JSONParser.parse(text))
            #expect(try Query(wire: query.wireObject) == query, "\(text)")
        }
        #expect(try Query(wire: JSONParser.parse("{}")).identifier == "default")
        #expect(try Query(wire: JSONParser.parse(#"{"i":".key","ep":"b","ein":false}"#)).identifier == #"{"ein":false,"ep":"b","i":".key"}"#)
    }

    @Test func wireDefaults() throws {
        // iOS sends no sin/ein: inclusive. A legacy limit without vf counts from the end unless a start is set.
        let query = try Query(wire: JSONParser.parse(#"{"sp":1,"l":2}"#))
        #expect(query.start?.inclusive == true)
        #expect(query.limit == QueryLimit(count: 2, fromEnd: false))
        #expect(try Query(wire: JSONParser.parse(#"{"l":2}"#)).limit?.fromEnd == true)
        #expect(throws: ValidationError.self) { try Query(wire: JSONParser.parse(#"{"l":-1}"#)) }
        #expect(throws: ValidationError.self) { try Query(wire: JSONParser.parse(#"{"sp":1,"i":".key"}"#)) }
        #expect(throws: ValidationError.self) { try Query(wire: JSONParser.parse(#"{"i":"a.b"}"#)) }
        #expect(throws: ValidationError.self) { try Query(wire: JSONParser.parse(#"{"vf":"x","l":1}"#)) }
    }

    @Test func resultsOfLeavesAreEmptyAndPrioritiesAreStripped() throws {
        let limited = Query(limit: QueryLimit(count: 1, fromEnd: false))
        #expect(limited.result(of: Node(.number(5))).isEmpty)
        let node = try Node(jsonText: #"{"a":1,"b":2,".priority":3}"#)
        #expect(limited.result(of: node).jsonText(format: .export) == #"{"a":1}"#)
    }
}
