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
    /// What a node holds. Most nodes of a tree are leaves, so a leaf without a priority is kept
    /// inline, with no allocation of its own; parents and prioritised leaves share a storage
    /// object. A leaf with a priority is always shared, and one without never is. A parent of a
    /// few leaves without priorities may instead be packed into one allocation (`PackedLeaves`),
    /// as loading and JSON writes build them; it turns into a shared one when written below.
    ///
    /// `Sendable` although `PackedLeaves` (a `ManagedBuffer`) is not checked: its bytes never
    /// change after it is made, and its hash slot is atomic.
    enum Representation: @unchecked Sendable {
        case empty
        case leaf(Leaf)
        case shared(NodeStorage)
        case packed(PackedLeaves)
    }

    var representation: Representation

    /// The empty node: null, no data.
    public static let empty = Node(representation: .empty)

    init(representation: Representation) { self.representation = representation }

    /// A leaf, with an optional priority.
    public init(_ leaf: Leaf, priority: Priority? = nil) {
        if let priority {
            representation = .shared(NodeStorage(content: .leaf(leaf), priority: priority))
        } else {
            representation = .leaf(leaf)
        }
    }

    /// A node with the given children; empty children are left out, and no children at all give
    /// the empty node (its priority dropped). A few leaves without priorities are packed.
    public init(children: some Sequence<(Key, Node)>, priority: Priority? = nil) {
        var map = ChildMap()
        for (key, child) in children where !key.isPriority { map.set(key, child) }
        if priority == nil, map.count <= PackedLeaves.maxCount, let packed = PackedLeaves.pack(map) {
            self.init(representation: .packed(packed))
        } else {
            self.init(map: map, priority: priority)
        }
    }

    init(map: ChildMap, priority: Priority?) {
        representation = map.isEmpty ? .empty : .shared(NodeStorage(content: .children(map), priority: priority))
    }

    public var isEmpty: Bool {
        if case .empty = representation { return true }
        return false
    }

    /// The primitive value when this is a leaf.
    public var leaf: Leaf? {
        switch representation {
        case .leaf(let leaf): return leaf
        case .shared(let storage):
            if case .leaf(let leaf) = storage.content { return leaf }
            return nil
        case .empty, .packed: return nil
        }
    }

    public var isLeaf: Bool { leaf != nil }

    /// The priority, if any.
    public var priority: Priority? {
        if case .shared(let storage) = representation { return storage.priority }
        return nil
    }

    /// The children in key order (none for a leaf or the empty node).
    public var children: ChildMap {
        switch representation {
        case .shared(let storage):
            if case .children(let map) = storage.content { return map }
            return ChildMap()
        case .packed(let packed): return packed.childMap()
        case .empty, .leaf: return ChildMap()
        }
    }

    public var childCount: Int {
        if case .packed(let packed) = representation { return packed.count }
        return children.count
    }

    /// The child named `key`; `.priority` reads the priority as a leaf. Empty when absent.
    public func child(_ key: Key) -> Node {
        // `.priority` is never stored as a child, and only a node with storage has a priority,
        // so the key is checked only where a lookup comes back empty.
        switch representation {
        case .shared(let storage):
            if case .children(let map) = storage.content, let child = map[key] { return child }
            return key.isPriority ? storage.priority.map { Node(Leaf($0)) } ?? .empty : .empty
        case .packed(let packed): return packed.child(key) ?? .empty
        case .empty, .leaf: return .empty
        }
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
        switch representation {
        case .empty:
            return
        case .leaf(let leaf):
            if let priority { representation = .shared(NodeStorage(content: .leaf(leaf), priority: priority)) }
        case .shared(let storage):
            if priority == nil, case .leaf(let leaf) = storage.content {
                representation = .leaf(leaf)
            } else {
                uniqueStorage().priority = priority
            }
        case .packed:
            if priority != nil { uniqueStorage().priority = priority }
        }
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

    /// This node with `node` written at `keys[depth...]`, for the rules' view of the tree after a
    /// write, which rebuilds only the levels a rule reads.
    func setting(_ node: Node, at keys: [Key], from depth: Int) -> Node {
        var copy = self
        copy.set(node, at: keys, from: depth)
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
        if depth + 1 == keys.count, case .packed(let packed) = representation, let packedResult = packed.setting(key, to: node) {
            // A field of a packed record: the record stays packed.
            self = packedResult
            return
        }
        guard isParent else {
            // A leaf or nothing: a non-empty write turns it into a parent, keeping a leaf's priority.
            var child = Node.empty
            child.set(node, at: keys, from: depth + 1)
            guard !child.isEmpty else { return }
            // A record started one field at a time is packed from its first field on.
            let priority = self.priority
            if priority == nil, let packed = PackedLeaves.pack(CollectionOfOne((key: key, node: child))) {
                self = Node(representation: .packed(packed))
                return
            }
            var map = ChildMap()
            map.set(key, child)
            self = Node(map: map, priority: priority)
            return
        }
        let emptied = uniqueStorage().modifyChildren { map in
            map.modify(key) { $0.set(node, at: keys, from: depth + 1) }
            return map.isEmpty
        }
        if emptied { representation = .empty }
    }

    /// True for a node with children (checked without copying the children out).
    private var isParent: Bool {
        switch representation {
        case .shared(let storage): return storage.isParent
        case .packed: return true
        case .empty, .leaf: return false
        }
    }

    /// The storage, made unshared for an in-place change (copied if anyone else holds it), with
    /// its cached hash forgotten; a packed parent is unpacked into new storage. Only for a node
    /// that has storage or is packed.
    private mutating func uniqueStorage() -> NodeStorage {
        if case .packed(let packed) = representation {
            let storage = NodeStorage(content: .children(packed.childMap()), priority: nil)
            representation = .shared(storage)
            return storage
        }
        guard case .shared(var storage) = representation else {
            preconditionFailure("Internal inconsistency: a node without storage changed in place")
        }
        // Drop this node's own reference first, so `storage` is the only one if nobody shares it.
        representation = .empty
        if isKnownUniquelyReferenced(&storage) {
            storage.forgetHash()
        } else {
            storage = storage.copy()
        }
        representation = .shared(storage)
        return storage
    }
}

/// The shared part of a parent or a prioritised leaf.
///
/// There is one per parent, so it holds only what every parent needs (56 bytes): the priority and
/// the hash cache, which most nodes never have, live out of line.
final class NodeStorage: @unchecked Sendable {
    enum Content {
        case leaf(Leaf)
        case children(ChildMap)
    }

    // `content` and `priority` change only while the storage is uniquely referenced
    // (copy-on-write), by the one holder of that reference, so the runtime's exclusivity checks
    // are skipped; the hash cache may be filled from any thread, so it is an atomic reference.
    @exclusivity(unchecked) var content: Content
    @exclusivity(unchecked) private var priorityBox: NodePriorityBox?
    /// The cached digests, owned (+1) by this storage once set; released only by the unique
    /// owner (`forgetHash`, `deinit`), so no reader can see one freed.
    private let hashCache = Atomic<Unmanaged<NodeHashBox>?>(nil)

    init(content: Content, priority: Priority?) {
        self.content = content
        self.priorityBox = priority.map(NodePriorityBox.init)
    }

    private init(content: Content, priorityBox: NodePriorityBox?) {
        self.content = content
        self.priorityBox = priorityBox
    }

    deinit {
        hashCache.load(ordering: .acquiring)?.release()
    }

    var priority: Priority? {
        get { priorityBox?.priority }
        set { priorityBox = newValue.map(NodePriorityBox.init) }
    }

    /// An unshared copy, without the hash cache.
    func copy() -> NodeStorage { NodeStorage(content: content, priorityBox: priorityBox) }

    /// True for a parent (checked without copying the children out).
    var isParent: Bool {
        if case .children = content { return true }
        return false
    }

    /// The cached digests, if this node was hashed since its last change.
    var cachedHash: NodeHashSummary? {
        hashCache.load(ordering: .acquiring)?.takeUnretainedValue().summary
    }

    /// Caches `summary`; when two threads hash the node at once, the first to store wins (both
    /// computed the same digests).
    func cacheHash(_ summary: NodeHashSummary) {
        let box = Unmanaged.passRetained(NodeHashBox(summary))
        if !hashCache.compareExchange(expected: nil, desired: box, ordering: .acquiringAndReleasing).exchanged {
            box.release()
        }
    }

    /// Drops the cached digests before a change; only for the unique owner.
    func forgetHash() {
        guard let box = hashCache.load(ordering: .relaxed) else { return }
        hashCache.store(nil, ordering: .relaxed)
        box.release()
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
        switch (lhs.representation, rhs.representation) {
        case (.empty, .empty): return true
        case let (.leaf(a), .leaf(b)): return a == b
        case let (.shared(l), .shared(r)):
            if l === r { return true }
            guard l.priority == r.priority else { return false }
            switch (l.content, r.content) {
            case let (.leaf(a), .leaf(b)): return a == b
            case let (.children(a), .children(b)):
                guard a.count == b.count else { return false }
                return zip(a, b).allSatisfy { $0.key == $1.key && $0.node == $1.node }
            default: return false
            }
        case let (.packed(l), .packed(r)): return l.hasSameEntries(as: r)
        case (.packed, .shared), (.shared, .packed):
            // Mixed forms of a parent: equal only without priorities, child by child.
            guard lhs.priority == nil, rhs.priority == nil, !lhs.isLeaf, !rhs.isLeaf, lhs.childCount == rhs.childCount
            else { return false }
            return zip(lhs.children, rhs.children).allSatisfy { $0.key == $1.key && $0.node == $1.node }
        default: return false
        }
    }
}
