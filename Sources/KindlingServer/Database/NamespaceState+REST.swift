import KindlingCore

/// REST reads, writes and event streams, on the same state and in the same order as the
/// realtime protocol's requests.
extension NamespaceState {
    /// What a GET returns: the location, or the query's window of it.
    func restRead(_ path: Path, query: Query) -> Node {
        database.read(path, query: query)
    }

    /// Runs a REST write: the `if-match` comparison, validation and server values (resolved at
    /// `now`), and the commit, as one step, so a compare-and-set is atomic. Appends what the
    /// listeners (realtime and streams) must be sent. Nothing is written unless the outcome is
    /// `.written`.
    mutating func restWrite(_ request: RESTWrite, now: Int64, into out: inout [Outgoing]) -> RESTWriteOutcome {
        let clock = ServerValues(timestamp: Double(now))
        if let expected = request.ifMatch {
            let current = database.tree.node(at: request.path)
            guard ETag.of(current) == expected else { return .preconditionFailed(current: current) }
        }
        do throws(ValidationError) {
            let result: RESTWriteResult
            switch request.operation {
            case .set(let json):
                let write = try database.tree.resolveSet(request.path, json, serverValues: clock)
                commit(write, into: &out)
                guard case .set(_, let node) = write else { return .refused(ValidationError(.invalidData, "Unexpected write")) }
                result = .stored(node)
            case .remove:
                commit(try database.tree.resolveSet(request.path, .null, serverValues: clock), into: &out)
                result = .stored(.empty)
            case .push(let json):
                if request.path.last?.isPriority == true {
                    throw ValidationError(.invalidPath, "Can't push below \".priority\" at \(request.path)")
                }
                if request.path.count >= Path.maxDepth {
                    throw ValidationError(.tooDeep, "Path \(request.path)/<push id> exceeds the maximum depth of \(Path.maxDepth) levels")
                }
                let name = nextPushID(now: now)
                commit(try database.tree.resolveSet(request.path.child(name), json, serverValues: clock), into: &out)
                result = .pushed(name)
            case .update(let members):
                let write = try database.tree.resolveUpdate(request.path, members, serverValues: clock)
                commit(write, into: &out)
                guard case .merge(_, let entries) = write else { return .refused(ValidationError(.invalidData, "Unexpected write")) }
                result = .updated(entries)
            }
            return .written(result, location: database.tree.node(at: request.path))
        } catch {
            return .refused(error)
        }
    }

    /// Registers an event stream listening at `path` and returns its first event: a `put` of the
    /// whole location (or query window) at `/`. Taking the data and registering happen in one
    /// step, so the stream misses no write and sees none twice.
    mutating func openStream(_ stream: ConnectionID, at path: Path, query: Query) -> [Outgoing] {
        streams[stream] = path
        return encode([database.listen(stream, at: path, query: query, tag: nil)])
    }

    /// Forgets an event stream.
    mutating func closeStream(_ stream: ConnectionID) {
        guard streams.removeValue(forKey: stream) != nil else { return }
        database.removeSubscriber(stream)
    }
}
