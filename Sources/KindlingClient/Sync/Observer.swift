import Dispatch
import KindlingCore

/// A registered callback.
struct Observer: Sendable {
    var path: Path
    var query: Query
    var eventType: DataEventType
    var queue: DispatchQueue
    var callback: @Sendable (DataEvent) -> Void
    /// Observers of the client's own `.info` data live outside the sync tree.
    var info: InfoPath?
    /// Called once if the server refuses or revokes the listen behind this observer.
    var cancel: (@Sendable (DatabaseError) -> Void)?
}
