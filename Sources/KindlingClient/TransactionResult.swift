import KindlingCore

/// What a transaction block decides for the data it was given.
public enum TransactionResult: Sendable {
    /// Write this value (compare-and-set against the data the block saw).
    case success(JSONValue)
    /// Leave the data as it is and end the transaction without writing.
    case abort
}

/// How a transaction ended.
public struct TransactionOutcome: Sendable {
    /// False when the block aborted.
    public let committed: Bool
    /// The data at the location after the transaction (what the block saw, when it aborted).
    public let snapshot: DataSnapshot
}
