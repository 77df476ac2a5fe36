import Testing

@testable import KindlingCore

/// Literal syntax and printing: a value written in source is the JSON it looks like, and prints
/// back as that JSON.
struct JSONValueLiteralTests {
    @Test func everyKindOfLiteralBuildsTheMatchingCase() {
        let value: JSONValue = ["free": 3, "ratio": 0.25, "name": "Library", "open": true, "closed": nil, "tags": ["quiet", 1]]
        #expect(
            value
                == .object([
                    JSONMember("free", .number(3)), JSONMember("ratio", .number(0.25)), JSONMember("name", .string("Library")),
                    JSONMember("open", .bool(true)), JSONMember("closed", .null),
                    JSONMember("tags", .array([.string("quiet"), .number(1)])),
                ]))
    }

    @Test func aDictionaryLiteralKeepsTheOrderWritten() {
        let value: JSONValue = ["z": 1, "a": 2, "m": 3]
        guard case .object(let members) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(members.map(\.key) == ["z", "a", "m"])
    }

    @Test func valuesPrintAsCompactJSONText() throws {
        let value: JSONValue = ["free": 2, "name": "Café \"3\"", "list": [1.5, nil, false], "empty": [:]]
        #expect(value.description == #"{"free":2,"name":"Café \"3\"","list":[1.5,null,false],"empty":{}}"#)
        #expect("\(value)" == value.description)
        #expect(String(reflecting: value) == value.description)
        #expect(JSONMember("a", 1).description == #""a":1"#)
        // The text parses back to the same value.
        #expect(try JSONParser.parse(value.description) == value)
    }

    @Test func printedDoublesRoundTripExactly() throws {
        for number in [0.1, 1.0 / 3, 5e-324, 1.7976931348623157e308, -0.0, 123456789012345.67, 1e21] {
            let value: JSONValue = .number(number)
            #expect(try JSONParser.parse(value.description).numberValue?.bitPattern == number.bitPattern)
        }
    }
}
