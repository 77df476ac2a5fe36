/// One database's tree and the write rules applied to it.
///
/// Writes go in two steps: `resolveSet`/`resolveUpdate` validate client JSON and resolve server
/// values against the current data, returning a `Write` (or an error, having changed nothing);
/// `apply` then performs it. The owner of the tree runs both on its one serial executor, so a
/// resolved write applies to exactly the data it was resolved against.
public struct DataTree: Sendable {
    /// The whole tree. Copying it is a free snapshot.
    public private(set) var root: Node

    public init(root: Node = .empty) { self.root = root }

    /// The data at `path` (empty when absent).
    public func node(at path: Path) -> Node { root.child(at: path) }

    /// Validates a set (overwrite) of `json` at `path`. A path ending in `.priority` sets the
    /// priority of the node above it.
    public func resolveSet(_ path: Path, _ json: JSONValue, serverValues: ServerValues) throws(ValidationError) -> Write {
        .set(path, try decode(json, at: path, serverValues: serverValues))
    }

    /// Validates a multi-path update at `path`: each member name is a relative path, each value
    /// replaces the data there (null removes it). Paths may not overlap, and there must be at least
    /// one.
    public func resolveUpdate(
        _ path: Path,
        _ members: [JSONMember],
        serverValues: ServerValues
    ) throws(ValidationError) -> Write {
        guard !members.isEmpty else { throw ValidationError(.invalidUpdate, "Update at \(path) has no children to update") }
        if path.last?.isPriority == true {
            throw ValidationError(.invalidPath, "Update at \(path): can't update below \".priority\"")
        }
        var entries: [MergeEntry] = []
        for member in members {
            let relative = try Path(member.key)
            guard !relative.isRoot else {
                throw ValidationError(.invalidUpdate, "Update at \(path) has an empty path \(ValidationError.quoted(member.key))")
            }
            let full = path.appending(relative)
            if full.count > Path.maxDepth { throw .tooDeep(full.description) }
            entries.append(MergeEntry(path: relative, node: try decode(member.value, at: full, serverValues: serverValues)))
        }
        let sorted = entries.map(\.path).sorted()
        for (earlier, later) in zip(sorted, sorted.dropFirst()) where earlier.contains(later) {
            throw ValidationError(
                .invalidUpdate,
                "Update at \(path): path \(earlier) is \(earlier == later ? "repeated" : "an ancestor of \(later)")"
            )
        }
        return .merge(path, entries)
    }

    /// Applies a resolved write.
    public mutating func apply(_ write: Write) {
        switch write {
        case .set(let path, let node):
            root.set(node, at: path)
        case .merge(let path, let entries):
            for entry in entries { root.set(entry.node, at: path.appending(entry.path)) }
        }
    }

    /// True when the data at `path` has hash `hash` in any SDK's variant: the test a
    /// transaction's compare-and-set makes. `""` matches only an empty location.
    public func matches(hash: String, at path: Path) -> Bool {
        node(at: path).matchesHash(hash)
    }

    private func decode(_ json: JSONValue, at path: Path, serverValues: ServerValues) throws(ValidationError) -> Node {
        if path.last?.isPriority == true, let owner = path.parent {
            let wrapped = JSONValue.object([JSONMember(".priority", json), JSONMember(".value", .bool(true))])
            let priority = try decoder(serverValues).decode(wrapped, path: owner).priority
            return priority.map { Node(Leaf($0)) } ?? .empty
        }
        return try decoder(serverValues).decode(json, path: path)
    }

    /// A decoder that looks up existing data (for server values) in the whole tree, on demand.
    private func decoder(_ serverValues: ServerValues) -> NodeDecoder {
        NodeDecoder(serverValues: serverValues, existing: root, base: .root)
    }
}
