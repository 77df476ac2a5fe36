import NIOCore
import Testing

@testable import KindlingServer

/// A connection's frames of one loop turn are joined into one write: the bytes must come out
/// whole, in order, and a frame shared with other connections must not be changed.
struct JoinedFramesTests {
    private let allocator = ByteBufferAllocator()

    private func frame(_ byte: UInt8, count: Int) -> ByteBuffer {
        ByteBuffer(bytes: [UInt8](repeating: byte, count: count))
    }

    /// Adds `frames`, collecting what must be written early and what is held at the end.
    private func written(_ frames: [ByteBuffer]) -> [ByteBuffer] {
        var joined = JoinedFrames()
        var out: [ByteBuffer] = []
        for frame in frames {
            if let early = joined.add(frame, allocator: allocator) { out.append(early) }
        }
        if let rest = joined.take() { out.append(rest) }
        #expect(joined.isEmpty)
        return out
    }

    @Test func smallFramesComeOutAsOneBufferInOrder() {
        let frames = (0..<16).map { frame(UInt8($0), count: 40) }
        let out = written(frames)
        #expect(out.count == 1)
        #expect(out.first.map { Array($0.readableBytesView) } == frames.flatMap { Array($0.readableBytesView) })
    }

    @Test func aLoneFrameIsKeptAsItIs() {
        let shared = frame(7, count: 100)
        var joined = JoinedFrames()
        #expect(joined.isEmpty)
        #expect(joined.add(shared, allocator: allocator) == nil)
        #expect(!joined.isEmpty)
        #expect(joined.take() == shared)
        #expect(joined.take() == nil)
    }

    @Test func aSharedFrameIsNotWrittenInto() {
        let shared = frame(1, count: 10)
        let copy = shared
        var joined = JoinedFrames()
        _ = joined.add(shared, allocator: allocator)
        _ = joined.add(frame(2, count: 10), allocator: allocator)
        _ = joined.add(frame(3, count: 10), allocator: allocator)
        #expect(joined.take()?.readableBytes == 30)
        #expect(shared == copy)
        #expect(shared.readableBytes == 10)
    }

    @Test func theLimitEndsAJoinWithoutLosingOrReorderingBytes() {
        let sizes = [100, 9_000, 8_000, 500, 20_000, 30, 30, JoinedFrames.limit, 1]
        let frames = sizes.enumerated().map { frame(UInt8($0.offset), count: $0.element) }
        let out = written(frames)
        #expect(out.allSatisfy { $0.readableBytes <= JoinedFrames.limit || sizes.contains($0.readableBytes) })
        #expect(out.flatMap { Array($0.readableBytesView) } == frames.flatMap { Array($0.readableBytesView) })
        // 100 + 9,000 join; 8,000 would pass the limit, so starts a new join with 500; the large
        // frame goes alone; the two small ones join; the frame of exactly the limit goes alone,
        // and the last byte on its own.
        #expect(out.map(\.readableBytes) == [9_100, 8_500, 20_000, 60, JoinedFrames.limit, 1])
    }
}
