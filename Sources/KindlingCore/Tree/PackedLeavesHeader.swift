/// The fixed part of a `PackedLeaves` node, stored ahead of its bytes in the same allocation.
struct PackedLeavesHeader {
    /// The number of children.
    var count: UInt32
    /// The bytes of the entries, after the hash slot.
    var byteCount: UInt32
}
