/// One block of a big parent's children, as a snapshot holds it (`SnapshotFormat`, tag 7),
/// copied out of the stream so that another thread can decode it while the reader goes on.
///
/// It owns its bytes and is handed from the reading thread to the one that decodes it, never
/// shared, so it is `Sendable` without checks.
public final class SnapshotBlock: @unchecked Sendable {
    /// The children one block decodes to: whole B+tree pages, to be joined in order.
    public struct Decoded: @unchecked Sendable {
        var children: OrderedMapBuilder<Key>
    }

    let bytes: UnsafeMutableBufferPointer<UInt8>
    let count: Int
    let depth: Int
    /// Where the block's bytes start in the snapshot, for error offsets.
    let offset: Int

    /// A block over `bytes`, which it owns from now on.
    init(taking bytes: UnsafeMutableBufferPointer<UInt8>, count: Int, depth: Int, offset: Int) {
        self.bytes = bytes
        self.count = count
        self.depth = depth
        self.offset = offset
    }

    deinit { bytes.deallocate() }

    /// Decodes the block's children, checking every byte as the whole snapshot is checked. Safe
    /// on any thread; a block is decoded once.
    public func decode() throws -> Decoded {
        try SnapshotDecoder.decode(self)
    }
}
