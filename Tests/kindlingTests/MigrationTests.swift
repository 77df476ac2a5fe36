import KindlingCore
import Testing

@testable import kindling

@Suite struct MigrationTests {
    @Test func putAndPatchEventsAreReadWithTheirPaths() throws {
        #expect(
            try MigrationEvent(name: "put", data: #"{"path":"/a/b","data":{"n":1}}"#)
                == .put(path: ["a", "b"], data: .object([JSONMember("n", .number(1))])))
        #expect(try MigrationEvent(name: "put", data: #"{"path":"/","data":null}"#) == .put(path: [], data: .null))
        #expect(
            try MigrationEvent(name: "patch", data: #"{"path":"/a","data":{"x":true}}"#)
                == .patch(path: ["a"], data: .object([JSONMember("x", .bool(true))])))
        #expect(try MigrationEvent(name: "keep-alive", data: "null") == .ignore)
        #expect(try MigrationEvent(name: "cancel", data: "null") == .cancelled)
        #expect(try MigrationEvent(name: "auth_revoked", data: "credential is no longer valid") == .authRevoked)
    }

    @Test func malformedEventsAreRefused() {
        #expect(throws: MigrationEvent.Failure.self) { try MigrationEvent(name: "put", data: "{") }
        #expect(throws: MigrationEvent.Failure.self) { try MigrationEvent(name: "put", data: #"{"data":1}"#) }
        #expect(throws: MigrationEvent.Failure.self) { try MigrationEvent(name: "patch", data: #"{"path":"/","data":1}"#) }
    }

    @Test func theDigestIgnoresOrderArraysAndNulls() throws {
        let one = MigrationDigest(try JSONParser.parse(#"{"b":{"y":2,"x":"s"},"a":[1,null,3],"z":null,"e":{}}"#))
        let other = MigrationDigest(try JSONParser.parse(#"{"a":{"0":1,"2":3},"b":{"x":"s","y":2.0}}"#))
        #expect(one == other)
        #expect(one.leaves == 4)
        #expect(one.hash.count == 64)
        #expect(MigrationDigest(try JSONParser.parse(#"{"a":{"0":1,"2":4},"b":{"x":"s","y":2}}"#)) != one)
        #expect(MigrationDigest(.null) == MigrationDigest(try JSONParser.parse("{}")))
        #expect(MigrationDigest(.null).leaves == 0)
    }
}
