/// A key an `OrderedMap` can sort by.
public protocol OrderedKey: Sendable {
    /// Negative, zero or positive as `lhs` sorts before, with or after `rhs`.
    static func compare(_ lhs: Self, _ rhs: Self) -> Int
}

/// The children of a node, in key order.
public typealias ChildMap = OrderedMap<Key>

/// A copy-on-write B+tree from ordered keys to nodes: a node's children (by `Key`), and the
/// sorted indexes that queries use (by indexed value, then key).
///
/// A node may hold millions of children (a chat's messages, a user list), so inserting, removing
/// and finding one child must cost O(log n), and copying the map for a snapshot must cost O(1).
/// Pages are shared between copies and copied only when a shared page is written; an unshared
/// page is changed in place. Each page counts the entries below it, so the map can also find the
/// n-th entry, and the rank of a key, in O(log n), which window queries use.
///
/// The map is `Sendable` although its pages (a `ManagedBuffer`, which the standard library marks
/// non-`Sendable`) are not checked: a page is changed only while uniquely referenced, by the one
/// holder of that reference, so pages shared between threads are never written.
public struct OrderedMap<K: OrderedKey>: @unchecked Sendable {
    typealias Page = OrderedMapPage<K>
    var root: Page?

    public init() {}

    /// Builds the map from entries already in strictly ascending key order, in O(n): pages are
    /// filled three quarters full and stacked, with no search per entry. Empty nodes are left out.
    public init(sortedEntries: [(key: K, node: Node)]) {
        var builder = OrderedMapBuilder<K>(expectedCount: sortedEntries.count)
        for (key, node) in sortedEntries where !node.isEmpty { builder.append(key, node) }
        self = builder.finish()
    }

    /// The number of children.
    public var count: Int { root?.count ?? 0 }

    public var isEmpty: Bool { root == nil }

    /// The child named `key`, if present.
    public subscript(key: K) -> Node? {
        guard let root else { return nil }
        return withExtendedLifetime(root) { Page.find(key, below: Unmanaged.passUnretained(root)) }
    }

    /// Gives `body` the child named `key` (empty if absent) to change in place: an empty result
    /// removes the child, a non-empty one stores it.
    public mutating func modify(_ key: K, _ body: (inout Node) -> Void) {
        if root == nil {
            var node = Node.empty
            body(&node)
            if !node.isEmpty { root = Page.leaf(key, node) }
            return
        }
        let split = Page.modify(&root!, key, body)
        if let split {
            let left = root!
            root = Page.inner([left, split])
        } else if root!.count == 0 {
            root = nil
        } else if !root!.isLeaf, root!.children.count == 1 {
            root = root!.children[0]
        }
    }

    /// Stores `node` under `key`, or removes the child when `node` is empty.
    public mutating func set(_ key: K, _ node: Node) {
        modify(key) { $0 = node }
    }

    /// The child at position `rank` in key order (0-based).
    public func entry(at rank: Int) -> (key: K, node: Node) {
        precondition(rank >= 0 && rank < count, "child rank out of range")
        var page = root!
        var rank = rank
        while !page.isLeaf {
            for child in page.children {
                if rank < child.count {
                    page = child
                    break
                }
                rank -= child.count
            }
        }
        return page.entry(at: rank)
    }

    /// How many children sort before `key` (its position if present).
    public func rank(of key: K) -> Int {
        guard var page = root else { return 0 }
        var rank = 0
        while !page.isLeaf {
            let index = page.childIndex(for: key)
            for child in page.children[..<index] { rank += child.count }
            page = page.children[index]
        }
        return rank + page.search(key).index
    }

    /// The first and last children.
    public var first: (key: K, node: Node)? { isEmpty ? nil : entry(at: 0) }
    public var last: (key: K, node: Node)? { isEmpty ? nil : entry(at: count - 1) }
}

extension OrderedMap: Sequence {
    /// Walks the children in key order.
    public struct Iterator: IteratorProtocol {
        var stack: [(page: Page, index: Int)] = []

        init(root: Page?) {
            if let root { descend(from: root) }
        }

        private mutating func descend(from page: Page) {
            var page = page
            while !page.isLeaf {
                stack.append((page, 0))
                page = page.children[0]
            }
            stack.append((page, 0))
        }

        public mutating func next() -> (key: K, node: Node)? {
            while let top = stack.last {
                if top.page.isLeaf {
                    if top.index < top.page.entryCount {
                        stack[stack.count - 1].index += 1
                        return top.page.entry(at: top.index)
                    }
                    stack.removeLast()
                    continue
                }
                let nextChild = top.index + 1
                if nextChild < top.page.children.count {
                    stack[stack.count - 1].index = nextChild
                    descend(from: top.page.children[nextChild])
                } else {
                    stack.removeLast()
                }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(root: root) }

    public var underestimatedCount: Int { count }
}
