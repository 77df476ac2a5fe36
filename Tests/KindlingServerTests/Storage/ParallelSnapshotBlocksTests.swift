import Foundation
import KindlingCore
import Testing

@testable import KindlingServer

/// Snapshots whose big parents are decoded on other threads: the same tree as decoding in
/// line, and a damaged block on a worker fails the whole load with the offset of the damage.
struct ParallelSnapshotBlocksTests {
    static let tree = Node(children: [
        (
            Key("users"),
            Node(
                children: (0..<30_000).map { index in
                    (
                        Key(stringLiteral: "k\(index)"),
                        Node(children: [(Key("name"), Node(.string("User number \(index)"))), (Key("n"), Node(.number(Double(index))))])
                    )
                })
        ),
        (Key("flag"), Node(.bool(true))),
    ])

    func encode(_ node: Node) throws -> [UInt8] {
        var bytes: [UInt8] = []
        _ = try SnapshotEncoder.encode(node) { bytes.append(contentsOf: $0) }
        return bytes
    }

    func decode(_ bytes: [UInt8], scheduler: ParallelSnapshotBlocks) throws -> Node {
        var offset = 0
        return try SnapshotDecoder.decode(chunkSize: 64 * 1024, scheduler: scheduler) { buffer in
            let count = min(buffer.count, bytes.count - offset)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.withUnsafeBytes { $0 }[offset..<(offset + count)]))
            offset += count
            return count
        }
    }

    @Test func bigParentsDecodeOnOtherThreadsToTheSameTree() throws {
        let bytes = try encode(Self.tree)
        for inFlight in [1, 2, 8] {
            let decoded = try decode(bytes, scheduler: ParallelSnapshotBlocks(inFlight: inFlight))
            #expect(decoded == Self.tree)
            #expect(decoded.hash == Self.tree.hash)
        }
        let directory = NSTemporaryDirectory() + "kindling-blocks-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/snapshot.ksnap.gz"
        _ = try SnapshotFile.write(Self.tree, to: path)
        #expect(try SnapshotFile.read(path).root == Self.tree)
    }

    @Test func aDamagedBlockFailsTheLoadWithItsOffset() throws {
        var bytes = try encode(Self.tree)
        let needle = Array("k27777".utf8)
        let at = try #require((0..<(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) })
        bytes[at] = UInt8(ascii: "/")
        do {
            _ = try decode(bytes, scheduler: ParallelSnapshotBlocks())
            Issue.record("loaded a snapshot with a forbidden key")
        } catch let error as SnapshotDecodingError {
            #expect(error.reason.contains("forbidden"))
            #expect(abs(error.offset - at) <= 2)
        }
    }
}
