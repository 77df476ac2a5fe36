/// What a reference and a query share: observers, reads and narrowing (`queryOrdered…`,
/// `queryLimited…`). A reference reads as the query with no order, range or limit at its
/// location, so both get every one of these calls from one implementation.
public protocol DatabaseQuerying: Sendable {
    /// The query this reads through.
    var asQuery: DatabaseQuery { get }
}

/// What `observe` returns and `removeObserver(withHandle:)` takes, as in the Firebase SDKs.
public typealias DatabaseHandle = UInt
