import KindlingProtocol

/// A write the server has not acknowledged. Kept until it is, and sent again, in order, after
/// every reconnect.
struct PendingWrite: Sendable {
    var writeID: Int
    var action: Action
    var completion: @Sendable (DatabaseError?) -> Void
}
