import Foundation
import KindlingCore

/// An immutable copy of the data at a location, as an event or a read delivered it.
public struct DataSnapshot: Sendable {
    /// The location the data comes from.
    public let path: Path
    /// The data, priorities included.
    public let node: Node
    /// The query whose order `children` follows.
    let query: Query
    /// The database it came from, for `ref`; set on every snapshot handed to the app.
    let database: Database?

    init(path: Path, node: Node, query: Query = .all, database: Database? = nil) {
        self.path = path
        self.node = node
        self.query = query
        self.database = database
    }

    /// The same snapshot, knowing its database.
    func attached(to database: Database) -> DataSnapshot { DataSnapshot(path: path, node: node, query: query, database: database) }

    /// The location the data comes from, as a reference (Firebase's `snapshot.ref`).
    public var ref: DatabaseReference {
        guard let database else { preconditionFailure("A snapshot made outside a database has no reference") }
        return DatabaseReference(database: database, path: path)
    }

    /// The last key of the path (`""` at the root), as Firebase's non-optional `key`.
    public var key: String { path.last?.string ?? "" }

    /// Whether there is data here, as Firebase's `exists()`.
    public func exists() -> Bool { !node.isEmpty }

    /// The data as Firebase's `value` holds it, for code written against the Firebase SDKs:
    /// `[String: Any]`, `[Any]`, `String`, and `NSNumber` for numbers and booleans (so `as? Int`,
    /// `as? Double` and `as? Bool` all work); `NSNull` when there is no data. `jsonValue` is
    /// the same data, typed.
    public var value: Any? { jsonValue.foundationObject }

    /// The data with its priorities (`.value` and `.priority` members), as Firebase's
    /// `valueInExportFormat()`, in the same Foundation types as `value`.
    public func valueInExportFormat() -> Any? {
        ((try? JSONParser.parse(node.jsonText(format: .export))) ?? .null).foundationObject
    }

    /// The data as plain JSON (no priorities; index-keyed objects as arrays); `.null` when empty.
    public var jsonValue: JSONValue { (try? JSONParser.parse(node.jsonText(format: .plain))) ?? .null }

    /// Whether the child at the relative path `path` (`"a/b"`) has data; false for a path that
    /// is not valid.
    public func hasChild(_ path: String) -> Bool {
        guard let relative = try? Path(path) else { return false }
        return !node.child(at: relative).isEmpty
    }

    /// Whether this data has children (an object, not a leaf or nothing).
    public func hasChildren() -> Bool { node.childCount > 0 }

    /// The data as export-form JSON text (with priorities), as the server sends it.
    public var exportText: String { node.jsonText(format: .export) }

    public var priority: Priority? { node.priority }

    public var childrenCount: UInt { UInt(node.childCount) }

    /// The direct children, in the query's order: a collection of snapshots, which also has
    /// Firebase's `allObjects` (`snapshot.children.allObjects as! [DataSnapshot]`).
    public var children: Children {
        let unlimited = Query(index: query.index)
        return Children(
            snapshots: unlimited.window(of: node).map {
                DataSnapshot(path: path.child($0.key), node: $0.node, query: unlimited, database: database)
            })
    }

    /// A snapshot's children, in order.
    public struct Children: RandomAccessCollection, Sendable {
        let snapshots: [DataSnapshot]

        /// Every child, untyped, as Firebase's enumerator's `allObjects` gives them.
        public var allObjects: [Any] { snapshots }

        public var startIndex: Int { snapshots.startIndex }
        public var endIndex: Int { snapshots.endIndex }
        public subscript(position: Int) -> DataSnapshot { snapshots[position] }
    }

    /// The child at a relative path (empty when absent). A path that is not valid (`"a..b"`,
    /// `"a#"`) is a programming error and stops the program, as in the Firebase SDKs; for a path
    /// built from input, use `childSnapshot(checkingPath:)`.
    public func childSnapshot(forPath relative: String) -> DataSnapshot {
        do {
            return try childSnapshot(checkingPath: relative)
        } catch {
            preconditionFailure("\(error.localizedDescription)")
        }
    }

    /// The child at a relative path (empty when absent); throws for a path that is not valid.
    public func childSnapshot(checkingPath relative: String) throws(DatabaseError) -> DataSnapshot {
        do {
            let relativePath = try Path(relative)
            return DataSnapshot(path: path.appending(relativePath), node: node.child(at: relativePath), database: database)
        } catch {
            throw .invalidArgument("Bad path \(relative): \(error)")
        }
    }
}

/// One event delivered to an observer or through `DatabaseQuery.events`.
public struct DataEvent: Sendable {
    public let type: DataEventType
    public let snapshot: DataSnapshot
    /// The key of the child before this one in the query's order, for `childAdded`,
    /// `childChanged` and `childMoved`.
    public let previousSiblingKey: String?

    /// The same event, its snapshot knowing its database.
    func attached(to database: Database) -> DataEvent {
        DataEvent(type: type, snapshot: snapshot.attached(to: database), previousSiblingKey: previousSiblingKey)
    }

    /// An event as an observer receives it (for code that records or replays events).
    public init(type: DataEventType, snapshot: DataSnapshot, previousSiblingKey: String?) {
        self.type = type
        self.snapshot = snapshot
        self.previousSiblingKey = previousSiblingKey
    }
}
