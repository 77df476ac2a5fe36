import Foundation
import KindlingCore
import Testing

@testable import KindlingClient

/// The SDK's own coders: models to `JSONValue` and back, the way the Realtime Database stores them.
struct JSONValueCodableTests {
    struct Location: Codable, Equatable {
        var building: String
        var floor: Int
    }

    struct Spot: Codable, Equatable {
        var name: String
        var free: Int
        var ratio: Double
        var location: Location
        var tags: [String]
        var note: String?
        var neighbours: [Location]
        var open: Bool
    }

    let spot = Spot(
        name: "Library 3", free: 2, ratio: 0.1, location: Location(building: "Main", floor: -1), tags: ["quiet", "sunny"],
        note: nil, neighbours: [Location(building: "Annex", floor: 2)], open: true)

    @Test func aNestedModelEncodesInDeclarationOrderAndLeavesNilOut() throws {
        let json = try JSONValueEncoder().encode(spot)
        #expect(
            json.description
                == #"{"name":"Library 3","free":2,"ratio":0.1,"location":{"building":"Main","floor":-1},"tags":["quiet","sunny"],"neighbours":[{"building":"Annex","floor":2}],"open":true}"#
        )
        #expect(json["note"] == nil)
        #expect(try JSONValueDecoder().decode(Spot.self, from: json) == spot)
    }

    @Test func doublesSurviveBitForBit() throws {
        struct Numbers: Codable, Equatable { var values: [Double] }
        let numbers = Numbers(values: [0.1, 1.0 / 3, 5e-324, -0.0, 1.7976931348623157e308, 9007199254740993.0])
        let json = try JSONValueEncoder().encode(numbers)
        // Through text as well, as the value travels on the wire.
        let reparsed = try JSONParser.parse(json.description)
        let decoded = try JSONValueDecoder().decode(Numbers.self, from: reparsed)
        #expect(decoded.values.map(\.bitPattern) == numbers.values.map(\.bitPattern))
    }

    @Test func whatJSONCannotHoldIsRefusedNotRounded() {
        struct Big: Codable { var n: Int64 }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Big(n: Int64(1) << 53 + 1)) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode([Double.nan]) }
        // A number from the server that an Int cannot hold is a decoding error, never a trap.
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Int.self, from: .number(1e300)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Int.self, from: .number(2.5)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(UInt8.self, from: .number(-1)) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Float.self, from: .number(1e300)) }
    }

    @Test func anObjectKeyedByIndexReadsAsAnArrayAndAnAbsentOneAsEmpty() throws {
        struct Queue: Codable, Equatable {
            var items: [String]
            var byIndex: [String: Int]
        }
        // What the server sends back for a written array, with a gap, and an empty array dropped.
        let stored: JSONValue = ["items": ["0": "a", "2": "c", "1": "b"], "byIndex": [nil, 7]]
        #expect(try JSONValueDecoder().decode(Queue.self, from: stored) == Queue(items: ["a", "b", "c"], byIndex: ["1": 7]))
        let gappy: JSONValue = ["items": ["0": "a", "2": "c"], "byIndex": [:]]
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Queue.self, from: gappy) }
        #expect(try JSONValueDecoder().decode([String?].self, from: ["0": "a", "2": "c"]) == ["a", nil, "c"])
        #expect(try JSONValueDecoder().decode(Queue.self, from: [:]) == Queue(items: [], byIndex: [:]))
        // Keys that are not indices (or too sparse to be an array) are not an array.
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode([String].self, from: ["0": "a", "x": "b"]) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode([String].self, from: ["0": "a", "999999": "b"]) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode([String].self, from: ["01": "a"]) }
    }

    @Test func aServerTimestampIsANumberTheNullOrThePlaceholderAndNothingElse() throws {
        #expect(try JSONValueDecoder().decode(ServerTimestamp.self, from: .number(1_000)).wrappedValue == Date(timeIntervalSince1970: 1))
        #expect(try JSONValueDecoder().decode(ServerTimestamp.self, from: .null).wrappedValue == nil)
        #expect(try JSONValueDecoder().decode(ServerTimestamp.self, from: ServerValue.timestamp()).wrappedValue == nil)
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(ServerTimestamp.self, from: "yesterday") }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(ServerTimestamp.self, from: ["at": 1]) }
    }

    @Test func aMissingValueNamesItsPath() throws {
        do {
            _ = try JSONValueDecoder().decode(Spot.self, from: ["name": "x", "free": 1, "ratio": 1, "location": ["building": "B"]])
            Issue.record("decoded a spot without a floor")
        } catch {
            guard case .keyNotFound(let key, let context) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(key.stringValue == "floor")
            #expect(context.codingPath.map(\.stringValue) == ["location"])
        }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Spot.self, from: .null) }
        #expect(try JSONValueDecoder().decode(Spot?.self, from: .null) == nil)
    }

    @Test func datesAreMillisecondsAndServerTimestampsArePlaceholdersUntilResolved() throws {
        struct CheckIn: Codable, Equatable {
            var student: String
            var since: Date
            @ServerTimestamp var at: Date?
        }
        let since = Date(timeIntervalSince1970: 1_700_000_000.25)
        let pending = try JSONValueEncoder().encode(CheckIn(student: "ada", since: since, at: nil))
        #expect(pending.description == #"{"student":"ada","since":1700000000250,"at":{".sv":"timestamp"}}"#)
        // As the server resolves it: a number of milliseconds.
        let resolved: JSONValue = ["student": "ada", "since": 1_700_000_000_250, "at": 1_700_000_123_456]
        let read = try JSONValueDecoder().decode(CheckIn.self, from: resolved)
        #expect(read.since == since)
        #expect(read.at == Date(timeIntervalSince1970: 1_700_000_123.456))
        // A set date is written as its number; an absent one reads as nil.
        #expect(try JSONValueEncoder().encode(read)["at"] == .number(1_700_000_123_456))
        #expect(try JSONValueDecoder().decode(CheckIn.self, from: ["student": "bo", "since": 0]).at == nil)
        let seconds = JSONValueEncoder(dateEncodingStrategy: .secondsSince1970)
        #expect(try seconds.encode(since) == .number(1_700_000_000.25))
    }

    @Test func rawJSONValuesPassThroughAModel() throws {
        struct Envelope: Codable, Equatable {
            var kind: String
            var payload: JSONValue
        }
        let envelope = Envelope(kind: "free-form", payload: ["z": [1, "two"], "a": nil])
        let json = try JSONValueEncoder().encode(envelope)
        #expect(json.description == #"{"kind":"free-form","payload":{"z":[1,"two"],"a":null}}"#)
        #expect(try JSONValueDecoder().decode(Envelope.self, from: json) == envelope)
        // Through Foundation's coders too, order aside.
        let viaFoundation = try JSONDecoder().decode(Envelope.self, from: JSONEncoder().encode(envelope))
        #expect(viaFoundation.payload["z"] == [1, "two"])
    }
}
