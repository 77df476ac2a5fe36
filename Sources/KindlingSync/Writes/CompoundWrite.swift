import KindlingCore

/// A set of overwrites at distinct, non-nested paths that can be laid over a node in one go: the
/// union of the user's pending writes.
///
/// A write at or below an existing write is folded into it, and a write above existing writes
/// replaces them, so at most one write ever covers a location. That lets the client answer "is
/// this location fully known from local writes alone?" by looking at a single node.
struct CompoundWrite: Sendable {
    /// The writes; a node with a value never has children.
    private(set) var tree: OrderedPathTree<Node>

    init(_ tree: OrderedPathTree<Node> = OrderedPathTree()) { self.tree = tree }

    static let empty = CompoundWrite()

    /// True when nothing is written.
    var isEmpty: Bool { tree.isEmpty }

    /// The writes with `node` written at `path`.
    func adding(_ node: Node, at path: Path) -> CompoundWrite {
        if path.isRoot { return CompoundWrite(OrderedPathTree(node)) }
        if let (rootmostPath, value) = tree.rootmostValue(on: path) {
            // Fold the new write into the one that already covers the location.
            let relative = path.dropFirst(rootmostPath.count)
            var copy = tree
            copy.set(value.setting(node, at: relative), at: rootmostPath)
            return CompoundWrite(copy)
        }
        var copy = tree
        copy.setTree(OrderedPathTree(node), at: path)
        return CompoundWrite(copy)
    }

    /// The writes with each `(relative path, node)` of a merge at `path` added in order.
    func adding(merge: [(path: Path, node: Node)], at path: Path) -> CompoundWrite {
        merge.reduce(self) { $0.adding($1.node, at: path.appending($1.path)) }
    }

    /// The writes without the write at `path` and any below it (a write above is left alone).
    func removing(at path: Path) -> CompoundWrite {
        if path.isRoot { return .empty }
        var copy = tree
        copy.setTree(OrderedPathTree(), at: path)
        return CompoundWrite(copy)
    }

    /// The data at `path` when a write covers it completely, else nil. Writes below `path` do
    /// not count: they leave the rest of the location unknown.
    func completeNode(at path: Path) -> Node? {
        guard let (rootmostPath, value) = tree.rootmostValue(on: path) else { return nil }
        return value.child(at: path.dropFirst(rootmostPath.count))
    }

    /// True when a write covers `path` completely.
    func hasCompleteWrite(at path: Path) -> Bool { completeNode(at: path) != nil }

    /// The immediate children that are completely written.
    var completeChildren: [NamedNode] {
        if let node = tree.value {
            return node.children.map { ($0.key, $0.node) }
        }
        var result: [NamedNode] = []
        tree.forEachChildValue { result.append(($0, $1)) }
        return result
    }

    /// The writes seen from `path`, relative to it.
    func childWrite(at path: Path) -> CompoundWrite {
        if path.isRoot { return self }
        if let shadowing = completeNode(at: path) { return CompoundWrite(OrderedPathTree(shadowing)) }
        return CompoundWrite(tree.subtree(at: path))
    }

    /// `node` with every write laid over it. A priority write is applied last, and only when the
    /// location ends up holding data: a priority cannot live on an empty node.
    func apply(to node: Node) -> Node {
        CompoundWrite.apply(tree, at: .root, to: node)
    }

    private static func apply(_ writes: OrderedPathTree<Node>, at path: Path, to node: Node) -> Node {
        if let value = writes.value { return node.setting(value, at: path) }
        var result = node
        var priorityWrite: Node?
        for branch in writes.children {
            if branch.key.isPriority {
                priorityWrite = branch.tree.value
            } else {
                result = apply(branch.tree, at: path.child(branch.key), to: result)
            }
        }
        if let priorityWrite, !result.child(at: path).isEmpty {
            result = result.setting(priorityWrite, at: path.child(.priority))
        }
        return result
    }
}
