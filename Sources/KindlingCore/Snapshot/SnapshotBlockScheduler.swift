/// Decodes the blocks of a big parent's children, possibly on other threads while the snapshot
/// is still being read. The core does no threading itself: the server provides one.
public protocol SnapshotBlockScheduler: AnyObject {
    /// Takes the next block of the parent being read (blocks come in order); it may call
    /// `block.decode()` on another thread at once, and may block to bound the blocks in flight.
    func submit(_ block: SnapshotBlock) throws
    /// Waits for every block submitted since the last call and returns what `decode()` gave for
    /// each, in submission order, failures included: the reader reports the first damage in the
    /// file, which it can only tell in order. Afterwards the scheduler holds nothing, ready for
    /// the next parent (or the next load, after a failed one).
    func finish() -> [Result<SnapshotBlock.Decoded, any Error>]
}
