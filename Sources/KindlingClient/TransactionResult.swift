import KindlingCore

/// What a transaction block decides for the data it was given, as Firebase's
/// `TransactionResult`: `success(withValue:)` to write, `abort()` to leave the data alone.
public struct TransactionResult: Sendable {
    /// The value to write (compare-and-set against the data the block saw), or nil to abort.
    let value: JSONValue?
    /// A value the block set that JSON cannot hold.
    let error: DatabaseError?

    /// Write the data as the block left it.
    public static func success(withValue data: MutableData) -> TransactionResult {
        let result = data.result
        return TransactionResult(value: result.value, error: result.error)
    }

    /// Write `value`.
    public static func success(_ value: JSONValue) -> TransactionResult { TransactionResult(value: value, error: nil) }

    /// Leave the data as it is and end the transaction without writing.
    public static func abort() -> TransactionResult { TransactionResult(value: nil, error: nil) }
}
