/// One revision of a key: its value and the stream sequence that is its revision (the number an
/// update's compare-and-set names).
public struct KeyValueEntry: Sendable, Hashable {
    /// The bucket.
    public var bucket: String
    /// The key.
    public var key: String
    /// The value (empty for delete and purge markers).
    public var value: [UInt8]
    /// The revision: the entry's sequence in the bucket's stream.
    public var revision: UInt64
    /// A value or a delete/purge marker.
    public var operation: KeyValueOperation
}
