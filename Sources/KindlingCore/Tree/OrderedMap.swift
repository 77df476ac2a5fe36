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
public struct OrderedMap<K: OrderedKey>: Sendable {
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
        guard var page = root else { return nil }
        while !page.isLeaf { page = page.children[page.childIndex(for: key)] }
        let (index, found) = page.search(key)
        return found ? page.values[index] : nil
    }

    /// Gives `body` the child named `key` (empty if absent) to change in place: an empty result
    /// removes the child, a non-empty one stores it.
    public mutating func modify(_ key: K, _ body: (inout Node) -> Void) {
        if root == nil {
            var node = Node.empty
            body(&node)
            if !node.isEmpty { root = Page(leafKeys: [key], values: [node]) }
            return
        }
        let split = Page.modify(&root!, key, body)
        if let split {
            let left = root!
            root = Page(children: [left, split])
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
        return (page.keys[rank], page.values[rank])
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
                    if top.index < top.page.keys.count {
                        stack[stack.count - 1].index += 1
                        return (top.page.keys[top.index], top.page.values[top.index])
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

/// One page of an `OrderedMap`: a leaf holding sorted entries, or an inner page holding child
/// pages and, for each, a key no greater than any key inside it.
final class OrderedMapPage<K: OrderedKey>: @unchecked Sendable {
    // Mutated only while uniquely referenced (copy-on-write), which makes sharing safe, and only
    // by the one caller holding that reference, so the runtime's exclusivity checks are skipped.
    @exclusivity(unchecked) var keys: [K]
    @exclusivity(unchecked) var values: [Node]
    @exclusivity(unchecked) var children: [OrderedMapPage]
    @exclusivity(unchecked) var count: Int

    static var maxEntries: Int { 64 }

    init(leafKeys: [K], values: [Node]) {
        self.keys = leafKeys
        self.values = values
        self.children = []
        self.count = leafKeys.count
    }

    init(children: [OrderedMapPage]) {
        self.keys = children.map { $0.keys[0] }
        self.values = []
        self.children = children
        self.count = children.reduce(0) { $0 + $1.count }
    }

    private init(copying other: OrderedMapPage) {
        keys = other.keys
        values = other.values
        children = other.children
        count = other.count
    }

    var isLeaf: Bool { children.isEmpty }

    /// Binary search among this page's keys: the insertion index and whether it is a match.
    @inline(__always)
    func search(_ key: K) -> (index: Int, found: Bool) {
        keys.withUnsafeBufferPointer { keys in
            var low = 0
            var high = keys.count
            while low < high {
                let mid = (low + high) / 2
                let order = K.compare(keys[mid], key)
                if order == 0 { return (mid, true) }
                if order < 0 { low = mid + 1 } else { high = mid }
            }
            return (low, false)
        }
    }

    /// The child page whose range holds `key` (inner pages only).
    @inline(__always)
    func childIndex(for key: K) -> Int {
        let (index, found) = search(key)
        return found ? index : max(index - 1, 0)
    }

    /// Changes the entry for `key` below `page`, copying shared pages on the way down. Returns a
    /// new right sibling when the page had to split.
    static func modify(_ page: inout OrderedMapPage, _ key: K, _ body: (inout Node) -> Void) -> OrderedMapPage? {
        if !isKnownUniquelyReferenced(&page) { page = OrderedMapPage(copying: page) }
        if page.isLeaf {
            let (index, found) = page.search(key)
            if found {
                body(&page.values[index])
                if page.values[index].isEmpty {
                    page.keys.remove(at: index)
                    page.values.remove(at: index)
                    page.count -= 1
                }
                return nil
            }
            var node = Node.empty
            body(&node)
            if node.isEmpty { return nil }
            page.keys.insert(key, at: index)
            page.values.insert(node, at: index)
            page.count += 1
            return page.keys.count > maxEntries ? page.splitLeaf() : nil
        }
        let index = page.childIndex(for: key)
        let before = page.children[index].count
        let split = modify(&page.children[index], key, body)
        let after = page.children[index].count
        page.count += after - before
        if after == 0 {
            page.children.remove(at: index)
            page.keys.remove(at: index)
        } else if index == 0 {
            page.keys[0] = page.children[0].keys[0]
        }
        if let split {
            page.count += split.count
            page.children.insert(split, at: index + 1)
            page.keys.insert(split.keys[0], at: index + 1)
        } else if after > 0, page.children[index].keys.count < maxEntries / 4 {
            page.mergeSmallChild(at: index)
        }
        return page.children.count > maxEntries ? page.splitInner() : nil
    }

    private func splitLeaf() -> OrderedMapPage {
        let half = keys.count / 2
        let right = OrderedMapPage(leafKeys: Array(keys[half...]), values: Array(values[half...]))
        keys.removeSubrange(half...)
        values.removeSubrange(half...)
        count = keys.count
        return right
    }

    private func splitInner() -> OrderedMapPage {
        let half = children.count / 2
        let right = OrderedMapPage(children: Array(children[half...]))
        children.removeSubrange(half...)
        keys.removeSubrange(half...)
        count -= right.count
        return right
    }

    /// Keeps pages from thinning out after removals: a small child merges into a neighbour when
    /// the two fit in one page.
    private func mergeSmallChild(at index: Int) {
        let neighbour = index + 1 < children.count ? index + 1 : index - 1
        guard neighbour >= 0 else { return }
        let (leftIndex, rightIndex) = (min(index, neighbour), max(index, neighbour))
        let left = children[leftIndex]
        let right = children[rightIndex]
        guard left.keys.count + right.keys.count <= OrderedMapPage.maxEntries else { return }
        if !isKnownUniquelyReferenced(&children[leftIndex]) { children[leftIndex] = OrderedMapPage(copying: left) }
        let merged = children[leftIndex]
        merged.keys.append(contentsOf: right.keys)
        merged.values.append(contentsOf: right.values)
        merged.children.append(contentsOf: right.children)
        merged.count += right.count
        children.remove(at: rightIndex)
        keys.remove(at: rightIndex)
    }
}
