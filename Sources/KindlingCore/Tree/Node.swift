import Synchronization

/// A node of the JSON tree: empty (null), a leaf, or children; any non-empty node may carry a
/// priority.
///
/// `Node` is a value: copying one is O(1) and the copies never see each other's changes, which
/// makes snapshots of the whole tree free (storage and rules hold on to old roots while writes go
/// on). Storage is shared between copies and copied only along the written path when shared;
/// a node nobody else holds is changed in place. The empty-object rule holds by construction: a
/// node that loses its last child becomes empty, and an empty node has no priority.
public struct Node: Sendable {
    var storage: NodeStorage?

    /// The empty node: null, no data.
    public static let empty = Node(storage: nil)

    init(storage: NodeStorage?) { self.storage = storage }

    /// A leaf, with an optional priority.
    public init(_ leaf: Leaf, priority: Priority? = nil) {
        storage = NodeStorage(content: .leaf(leaf), priority: priority)
    }

    /// A node with the given children; empty children are left out, and no children at all give
    /// the empty node (its priority dropped).
    public init(children: some Sequence<(Key, Node)>, priority: Priority? = nil) {
        var map = ChildMap()
        for (key, child) in children where !key.isPriority { map.set(key, child) }
        self.init(map: map, priority: priority)
    }

    init(map: ChildMap, priority: Priority?) {
        storage = map.isEmpty ? nil : NodeStorage(content: .children(map), priority: priority)
    }

    public var isEmpty: Bool { storage == nil }

    /// The primitive value when this is a leaf.
    public var leaf: Leaf? {
        if case .leaf(let leaf)? = storage?.content { return leaf }
        return nil
    }

    public var isLeaf: Bool { leaf != nil }

    /// The priority, if any.
    public var priority: Priority? { storage?.priority }

    /// The children in key order (none for a leaf or the empty node).
    public var children: ChildMap {
        if case .children(let map)? = storage?.content { return map }
        return ChildMap()
    }

    public var childCount: Int { children.count }

    /// The child named `key`; `.priority` reads the priority as a leaf. Empty when absent.
    public func child(_ key: Key) -> Node {
        if key.isPriority { return priority.map { Node(Leaf($0)) } ?? .empty }
        guard case .children(let map)? = storage?.content else { return .empty }
        return map[key] ?? .empty
    }

    /// The node at `path` below this one. Empty when absent.
    public func child(at path: Path) -> Node {
        var node = self
        for key in path.keys {
            node = node.child(key)
            if node.isEmpty { break }
        }
        return node
    }

    /// The same node with another priority. An empty node stays empty: a priority needs data.
    public func withPriority(_ priority: Priority?) -> Node {
        var copy = self
        copy.setPriority(priority)
        return copy
    }

    /// Replaces the priority; does nothing on the empty node.
    public mutating func setPriority(_ priority: Priority?) {
        guard storage != nil else { return }
        makeUnique()
        storage!.priority = priority
    }

    /// Replaces the node at `path` with `node`. A last key of `.priority` sets the priority of the
    /// node above it (a leaf or the empty node there clears it). Writing an empty node removes the
    /// location, and every parent left with no children disappears with it.
    public mutating func set(_ node: Node, at path: Path) {
        set(node, at: path.keys, from: 0)
    }

    /// This node with `node` written at `path`.
    public func setting(_ node: Node, at path: Path) -> Node {
        var copy = self
        copy.set(node, at: path)
        return copy
    }

    /// Writes `node` at `keys[depth...]` below this node. The keys array is passed whole with an
    /// offset: slicing it at every level would cost a retain per level on the hottest path.
    private mutating func set(_ node: Node, at keys: [Key], from depth: Int) {
        guard depth < keys.count else {
            self = node
            return
        }
        let key = keys[depth]
        if key.isPriority {
            setPriority(node.leaf.flatMap(Priority.init))
            return
        }
        // No local binding of the storage: a second reference would defeat the uniqueness check.
        guard storage?.isParent == true else {
            // A leaf or nothing: a non-empty write turns it into a parent, keeping a leaf's priority.
            var child = Node.empty
            child.set(node, at: keys, from: depth + 1)
            guard !child.isEmpty else { return }
            var map = ChildMap()
            map.set(key, child)
            self = Node(map: map, priority: priority)
            return
        }
        makeUnique()
        let emptied = storage!.modifyChildren { map in
            map.modify(key) { $0.set(node, at: keys, from: depth + 1) }
            return map.isEmpty
        }
        if emptied { storage = nil }
    }

    /// Makes `storage` unshared before an in-place change, and forgets its cached hash.
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage!) {
            storage = NodeStorage(content: storage!.content, priority: storage!.priority)
        } else {
            storage!.forgetHash()
        }
    }
}

/// The shared part of a non-empty `Node`.
final class NodeStorage: @unchecked Sendable {
    enum Content {
        case leaf(Leaf)
        case children(ChildMap)
    }

    // `content` and `priority` change only while the storage is uniquely referenced
    // (copy-on-write), by the one holder of that reference, so the runtime's exclusivity checks
    // are skipped; the hash cache may be filled from any thread, so it sits behind a mutex.
    @exclusivity(unchecked) var content: Content
    @exclusivity(unchecked) var priority: Priority?
    let hashCache = Mutex<NodeHashSummary?>(nil)

    init(content: Content, priority: Priority?) {
        self.content = content
        self.priority = priority
    }

    /// Set once a hash has been cached; read only by the unique owner before a change, so the
    /// common write to a node nobody hashed skips the lock.
    @exclusivity(unchecked) var mayHaveHash = false

    /// True for a node with children (checked without copying the children out).
    var isParent: Bool {
        if case .children = content { return true }
        return false
    }

    func forgetHash() {
        guard mayHaveHash else { return }
        hashCache.withLock { $0 = nil }
        mayHaveHash = false
    }

    /// Gives `body` the child map to change in place, without a second reference to it.
    func modifyChildren<R>(_ body: (inout ChildMap) -> R) -> R {
        guard case .children(var map) = content else { preconditionFailure("Internal inconsistency: not a parent node") }
        content = .leaf(.bool(false))
        defer { content = .children(map) }
        return body(&map)
    }
}

extension Node: Equatable {
    /// Structural equality: same values (exact bits for numbers, exact characters for strings),
    /// same keys, same priorities.
    public static func == (lhs: Node, rhs: Node) -> Bool {
        if lhs.storage === rhs.storage { return true }
        guard let l = lhs.storage, let r = rhs.storage, l.priority == r.priority else { return false }
        switch (l.content, r.content) {
        case let (.leaf(a), .leaf(b)): return a == b
        case let (.children(a), .children(b)):
            guard a.count == b.count else { return false }
            return zip(a, b).allSatisfy { $0.key == $1.key && $0.node == $1.node }
        default: return false
        }
    }
}
