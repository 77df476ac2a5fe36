import Foundation
import KindlingCore
import Testing

@testable import KindlingClient

/// `print(snapshot)` shows the data as JSON text, not a dump of the tree.
struct DataSnapshotPrintingTests {
    @Test func aSnapshotPrintsAsItsJSONAndDebugPrintsWithItsKey() throws {
        let node = try Node(json: ["free": 2, "name": "Library", "tags": ["0": "quiet", "1": "sunny"]])
        let snapshot = DataSnapshot(path: Path(keys: ["spots", "library-3"]), node: node.withPriority(.number(1)))
        #expect("\(snapshot)" == #"{"free":2,"name":"Library","tags":["quiet","sunny"]}"#)
        #expect(String(reflecting: snapshot) == #"Snap (library-3) {"free":2,"name":"Library","tags":{"0":"quiet","1":"sunny"},".priority":1}"#)
        #expect("\(snapshot.jsonValue)" == "\(snapshot)")
        let empty = DataSnapshot(path: .root, node: .empty)
        #expect("\(empty)" == "null")
        #expect(String(reflecting: empty) == "Snap (/) null")
    }

    @Test func aReferencePrintsAsItsURL() throws {
        let database = try Database(url: "http://127.0.0.1:1?ns=campus")
        defer { database.shutdown() }
        let spot = database.reference("spots/library-3")
        #expect("\(spot)" == "http://127.0.0.1:1/spots/library-3?ns=campus")
        #expect(spot.root.url == "http://127.0.0.1:1/?ns=campus")
        #expect(database.reference(".info/connected").url == "http://127.0.0.1:1/.info/connected?ns=campus")
        #expect(spot.parent?.key == "spots")
        #expect(throws: DatabaseError.self) { try spot.child(validating: "a..b") }
    }

    @Test func valuesAreFoundationObjectsAsFirebasesAre() throws {
        let node = try Node(json: ["n": 3, "x": 1.5, "b": true, "s": "t", "list": ["0": 1, "1": 2]])
        let snapshot = DataSnapshot(path: .root, node: node)
        let value = try #require(snapshot.value as? [String: Any])
        #expect(value["n"] as? Int == 3 && value["n"] as? Double == 3)
        #expect(value["x"] as? Double == 1.5 && value["x"] as? Int == nil)
        #expect(value["b"] as? Bool == true)
        #expect(value["s"] as? String == "t")
        #expect((value["list"] as? [Any])?.count == 2)
        #expect(DataSnapshot(path: .root, node: .empty).value is NSNull)
        // And back: what an app passes to a write.
        let written = try JSONValue(foundationObject: ["n": 3, "flag": false, "nested": ["a": [1, 2.5]], "none": NSNull()] as [String: Any])
        #expect(written == ["flag": false, "n": 3, "nested": ["a": [1, 2.5]], "none": nil])
        #expect(throws: DatabaseError.self) { try JSONValue(foundationObject: Date()) }
        #expect(throws: DatabaseError.self) { try JSONValue(foundationObject: Int64(1) << 60) }
    }
}
