import KindlingCore

/// A REST write as the namespace runs it: the body is parsed JSON (parsed on the event loop, so
/// the namespace's queue only validates and resolves it against the current data).
struct RESTWrite: Sendable {
    enum Operation: Sendable {
        /// PUT: replace the data at the path (null removes it).
        case set(JSONValue)
        /// POST: add the value under a fresh push id.
        case push(JSONValue)
        /// PATCH: a multi-path update relative to the path.
        case update([JSONMember])
        /// DELETE.
        case remove
    }

    var path: Path
    var operation: Operation
    /// The `if-match` ETag (normalised): the write happens only when the location's current ETag
    /// is this one.
    var ifMatch: String?
}

/// What a REST write came to.
enum RESTWriteOutcome: Sendable {
    /// Committed. `location` is the data now at the written path, for the `ETag` header.
    case written(RESTWriteResult, location: Node)
    /// `if-match` did not match: nothing was written; `current` is the data there now.
    case preconditionFailed(current: Node)
    /// Refused by validation: nothing was written.
    case refused(ValidationError)
    /// Refused because storage is failing: nothing was written.
    case unavailable(String)
    /// Refused because the write would create a namespace over the server's cap.
    case namespaceLimit(String)
}

/// The value a committed REST write answers with.
enum RESTWriteResult: Sendable {
    /// The data as stored (server values resolved): PUT, and DELETE's null.
    case stored(Node)
    /// The new child's name: POST answers `{"name": id}`.
    case pushed(Key)
    /// The update echoed back as stored: PATCH.
    case updated([MergeEntry])
}
