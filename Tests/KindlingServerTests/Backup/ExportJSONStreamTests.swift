import KindlingCore
import Testing

@testable import KindlingServer

/// A backup's JSON, written a chunk at a time, is exactly the export form written whole.
struct ExportJSONStreamTests {
    static let tree = """
        {"users":{"ada":{"name":"Ada","score":{".value":3,".priority":1}},"ünïcødé 🔥":{"k":"日本"}},
         "list":{"0":"a","1":"b","2":{".value":true,".priority":"p"}},
         "rooms":{".priority":2.5,"r1":{"t":1},"r2":null},"n":-0.5,"s":"quote \\" and \\\\ back"}
        """

    static func streamed(_ node: Node, chunkBytes: Int) throws -> (text: String, chunks: Int, count: Int) {
        var bytes: [UInt8] = []
        var chunks = 0
        var stream = ExportJSONStream(chunkBytes: chunkBytes) { chunk in
            bytes.append(contentsOf: chunk)
            chunks += 1
        }
        try stream.write(node)
        try stream.finish()
        return (String(decoding: bytes, as: UTF8.self), chunks, stream.count)
    }

    @Test func chunksMakeTheExportFormExactly() throws {
        let node = try Node(jsonText: Self.tree)
        for chunkBytes in [1, 7, 64, 1 << 20] {
            let result = try Self.streamed(node, chunkBytes: chunkBytes)
            #expect(result.text == node.jsonText(format: .export))
            #expect(result.count == result.text.utf8.count)
            if chunkBytes == 1 { #expect(result.chunks > 5) }
        }
        // It reads back to the same tree, priorities included.
        #expect(try Node(jsonText: Self.streamed(node, chunkBytes: 16).text) == node)
    }

    @Test func leavesAndTheEmptyTreeAreWrittenWhole() throws {
        #expect(try Self.streamed(.empty, chunkBytes: 1).text == "null")
        #expect(try Self.streamed(Node(.string("x"), priority: .number(1)), chunkBytes: 1).text == #"{".value":"x",".priority":1}"#)
    }

    @Test func aSinkThatThrowsStopsTheStream() throws {
        struct Full: Error {}
        let node = try Node(jsonText: Self.tree)
        var stream = ExportJSONStream(chunkBytes: 1) { _ in throw Full() }
        #expect(throws: Full.self) { try stream.write(node) }
    }
}
