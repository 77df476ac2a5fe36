/// Why snapshot bytes could not be read back into a tree: they end early, or hold something the
/// encoder never writes. The offset counts decoded (not compressed) bytes from the start.
public struct SnapshotDecodingError: Error, Sendable, CustomStringConvertible {
    /// Where in the decoded bytes the problem was found.
    public let offset: Int
    /// What was wrong there.
    public let reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset) of the snapshot data" }
}
