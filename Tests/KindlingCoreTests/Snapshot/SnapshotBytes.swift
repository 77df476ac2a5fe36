import Testing

@testable import KindlingCore

/// Snapshots in memory for the tests: a tree encoded to bytes, and bytes decoded as if read from
/// a file `step` bytes at a time (small steps and chunks exercise every refill of the reader).
enum SnapshotBytes {
    static func encode(_ node: Node, chunkSize: Int = 1 << 20) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let count = try SnapshotEncoder.encode(node, chunkSize: chunkSize) { bytes.append(contentsOf: $0) }
        #expect(count == bytes.count)
        return bytes
    }

    static func decode(
        _ bytes: [UInt8],
        scheduler: (any SnapshotBlockScheduler)? = nil,
        step: Int = .max,
        chunkSize: Int = 1 << 20
    ) throws -> Node {
        var offset = 0
        return try SnapshotDecoder.decode(chunkSize: chunkSize, scheduler: scheduler) { buffer in
            let count = min(buffer.count, step, bytes.count - offset)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.withUnsafeBytes { $0 }[offset..<(offset + count)]))
            offset += count
            return count
        }
    }
}
