import KindlingCore

/// What a REST write's method and body ask for (the body parsed on the event loop, so the
/// namespace's queue only validates and commits).
enum RESTWrite: Sendable {
    /// PUT: replace the data at the path (null removes it).
    case set(JSONValue)
    /// POST: add the value under a fresh push id.
    case push(JSONValue)
    /// PATCH: a multi-path update relative to the path.
    case update([JSONMember])
    /// DELETE.
    case remove

    /// The namespace operation at `path`; `ifMatch` (a normalised ETag) makes a PUT or DELETE
    /// conditional.
    func operation(at path: Path, ifMatch: String?) -> Operation {
        switch self {
        case .set(let json): return .set(path: path, data: json, precondition: ifMatch.map(Precondition.etag))
        case .remove: return .set(path: path, data: .null, precondition: ifMatch.map(Precondition.etag))
        case .push(let json): return .push(path: path, data: json)
        case .update(let members): return .update(path: path, members: members)
        }
    }
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
