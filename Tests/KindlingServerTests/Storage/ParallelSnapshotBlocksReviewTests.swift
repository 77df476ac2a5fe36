import Foundation
@testable import KindlingCore
import Testing

@testable import KindlingServer

/// Review tests for the server's block scheduler: a failed load leaves it usable, and the error
/// a damaged snapshot reports does not depend on whether blocks are decoded on workers.
struct ParallelSnapshotBlocksReviewTests {
    static let header = SnapshotFormat.magic + [SnapshotFormat.version]

    func decode(_ bytes: [UInt8], scheduler: ParallelSnapshotBlocks?) throws -> Node {
        var offset = 0
        return try SnapshotDecoder.decode(chunkSize: 1024, scheduler: scheduler) { buffer in
            let count = min(buffer.count, bytes.count - offset)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.withUnsafeBytes { $0 }[offset..<(offset + count)]))
            offset += count
            return count
        }
    }

    static func entry(_ key: String) -> [UInt8] {
        var bytes: [UInt8] = []
        SnapshotFormat.appendBytes(key, to: &bytes)
        bytes.append(SnapshotFormat.Tag.trueValue.rawValue)
        return bytes
    }

    /// One good block, then a block header that declares too many children.
    static var failingAfterABlock: [UInt8] {
        let good = entry("a")
        return header + [SnapshotFormat.Tag.blocks.rawValue, 2, UInt8(1 + good.count), 1] + good + [UInt8(1 + good.count), 9] + entry("b") + [0]
    }

    static var valid: [UInt8] {
        let a = entry("a")
        let b = entry("b")
        return header + [SnapshotFormat.Tag.blocks.rawValue, 2, UInt8(1 + a.count), 1] + a + [UInt8(1 + b.count), 1] + b + [0]
    }

    @Test func aSchedulerStillWorksAfterAFailedLoad() throws {
        let scheduler = ParallelSnapshotBlocks(inFlight: 2)
        #expect(throws: SnapshotDecodingError.self) { try decode(Self.failingAfterABlock, scheduler: scheduler) }
        let decoded = try decode(Self.valid, scheduler: scheduler)
        #expect(decoded.childCount == 2)
    }

    @Test func theFirstDamageIsReportedWithWorkersToo() throws {
        var bad: [UInt8] = []
        SnapshotFormat.appendBytes("a#", to: &bad)
        bad.append(SnapshotFormat.Tag.trueValue.rawValue)
        let bytes = Self.header + [SnapshotFormat.Tag.blocks.rawValue, 2, UInt8(1 + bad.count), 1] + bad + [UInt8(1 + 3), 9] + Self.entry("b") + [0]
        func failure(_ scheduler: ParallelSnapshotBlocks?) -> (Int, String)? {
            do { _ = try decode(bytes, scheduler: scheduler) } catch let error as SnapshotDecodingError { return (error.offset, error.reason) } catch
            {}
            return nil
        }
        let inline = try #require(failure(nil))
        let parallel = try #require(failure(ParallelSnapshotBlocks()))
        #expect(inline.0 == parallel.0, "inline \(inline), parallel \(parallel)")
        #expect(inline.1 == parallel.1, "inline \(inline), parallel \(parallel)")
    }
}
