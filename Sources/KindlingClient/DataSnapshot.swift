import KindlingCore

/// An immutable copy of the data at a location, as an event or a read delivered it.
public struct DataSnapshot: Sendable {
    /// The location the data comes from.
    public let path: Path
    /// The data, priorities included.
    public let node: Node
    /// The query whose order `children` follows.
    let query: Query

    init(path: Path, node: Node, query: Query = .all) {
        self.path = path
        self.node = node
        self.query = query
    }

    /// The last key of the path; nil at the root.
    public var key: String? { path.last?.string }

    public var exists: Bool { !node.isEmpty }

    /// The data as plain JSON (no priorities; index-keyed objects as arrays); `.null` when empty.
    public var value: JSONValue { (try? JSONParser.parse(node.jsonText(format: .plain))) ?? .null }

    /// The data as export-form JSON text (with priorities), as the server sends it.
    public var exportText: String { node.jsonText(format: .export) }

    public var priority: Priority? { node.priority }

    public var childrenCount: Int { node.childCount }

    /// The direct children, in the query's order.
    public var children: [DataSnapshot] {
        let unlimited = Query(index: query.index)
        return unlimited.window(of: node).map { DataSnapshot(path: path.child($0.key), node: $0.node, query: unlimited) }
    }

    /// The child at a relative path (empty when absent).
    public func childSnapshot(forPath relative: String) throws -> DataSnapshot {
        let relativePath = try Path(relative)
        return DataSnapshot(path: path.appending(relativePath), node: node.child(at: relativePath))
    }
}

/// One event delivered to an observer or through `DatabaseQuery.events`.
public struct DataEvent: Sendable {
    public let type: DataEventType
    public let snapshot: DataSnapshot
    /// The key of the child before this one in the query's order, for `childAdded`,
    /// `childChanged` and `childMoved`.
    public let previousSiblingKey: String?
}
