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
}
