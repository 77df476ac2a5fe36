/// The children of a node: a copy-on-write B+tree from `Key` to `Node`, in key order.
///
/// A node may hold millions of children (a chat's messages, a user list), so inserting, removing
/// and finding one child must cost O(log n), and copying the map for a snapshot must cost O(1).
/// Pages are shared between copies and copied only when a shared page is written; an unshared
/// page is changed in place. Each page counts the entries below it, so the map can also find the
/// n-th child in O(log n), which window queries on the key order use.
public struct ChildMap: Sendable {
    var root: ChildPage?

    public init() {}

    /// The number of children.
    public var count: Int { root?.count ?? 0 }

    public var isEmpty: Bool { root == nil }

    /// The child named `key`, if present.
    public subscript(key: Key) -> Node? {
        guard var page = root else { return nil }
        while !page.isLeaf { page = page.children[page.childIndex(for: key)] }
        let (index, found) = page.search(key)
        return found ? page.values[index] : nil
    }

    /// Gives `body` the child named `key` (empty if absent) to change in place: an empty result
    /// removes the child, a non-empty one stores it.
    public mutating func modify(_ key: Key, _ body: (inout Node) -> Void) {
        if root == nil {
            var node = Node.empty
            body(&node)
            if !node.isEmpty { root = ChildPage(leafKeys: [key], values: [node]) }
            return
        }
        let split = ChildPage.modify(&root!, key, body)
        if let split {
            let left = root!
            root = ChildPage(children: [left, split])
        } else if root!.count == 0 {
            root = nil
        } else if !root!.isLeaf, root!.children.count == 1 {
            root = root!.children[0]
        }
    }

    /// Stores `node` under `key`, or removes the child when `node` is empty.
    public mutating func set(_ key: Key, _ node: Node) {
        modify(key) { $0 = node }
    }

    /// The child at position `rank` in key order (0-based).
    public func entry(at rank: Int) -> (key: Key, node: Node) {
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
    public func rank(of key: Key) -> Int {
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
    public var first: (key: Key, node: Node)? { isEmpty ? nil : entry(at: 0) }
    public var last: (key: Key, node: Node)? { isEmpty ? nil : entry(at: count - 1) }
}

extension ChildMap: Sequence {
    /// Walks the children in key order.
    public struct Iterator: IteratorProtocol {
        var stack: [(page: ChildPage, index: Int)] = []

        init(root: ChildPage?) {
            if let root { descend(from: root) }
        }

        private mutating func descend(from page: ChildPage) {
            var page = page
            while !page.isLeaf {
                stack.append((page, 0))
                page = page.children[0]
            }
            stack.append((page, 0))
        }

        public mutating func next() -> (key: Key, node: Node)? {
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

/// One page of a `ChildMap`: a leaf holding sorted entries, or an inner page holding child pages
/// and, for each, a key no greater than any key inside it.
final class ChildPage: @unchecked Sendable {
    // Mutated only while uniquely referenced (copy-on-write), which makes sharing safe.
    var keys: [Key]
    var values: [Node]
    var children: [ChildPage]
    var count: Int

    static let maxEntries = 64

    init(leafKeys: [Key], values: [Node]) {
        self.keys = leafKeys
        self.values = values
        self.children = []
        self.count = leafKeys.count
    }

    init(children: [ChildPage]) {
        self.keys = children.map { $0.keys[0] }
        self.values = []
        self.children = children
        self.count = children.reduce(0) { $0 + $1.count }
    }

    private init(copying other: ChildPage) {
        keys = other.keys
        values = other.values
        children = other.children
        count = other.count
    }

    var isLeaf: Bool { children.isEmpty }

    /// Binary search among this page's keys: the insertion index and whether it is a match.
    @inline(__always)
    func search(_ key: Key) -> (index: Int, found: Bool) {
        var low = 0
        var high = keys.count
        while low < high {
            let mid = (low + high) / 2
            let order = Key.compare(keys[mid], key)
            if order == 0 { return (mid, true) }
            if order < 0 { low = mid + 1 } else { high = mid }
        }
        return (low, false)
    }

    /// The child page whose range holds `key` (inner pages only).
    @inline(__always)
    func childIndex(for key: Key) -> Int {
        let (index, found) = search(key)
        return found ? index : max(index - 1, 0)
    }

    /// Changes the entry for `key` below `page`, copying shared pages on the way down. Returns a
    /// new right sibling when the page had to split.
    static func modify(_ page: inout ChildPage, _ key: Key, _ body: (inout Node) -> Void) -> ChildPage? {
        if !isKnownUniquelyReferenced(&page) { page = ChildPage(copying: page) }
        let this = page
        if this.isLeaf {
            let (index, found) = this.search(key)
            if found {
                body(&this.values[index])
                if this.values[index].isEmpty {
                    this.keys.remove(at: index)
                    this.values.remove(at: index)
                    this.count -= 1
                }
                return nil
            }
            var node = Node.empty
            body(&node)
            if node.isEmpty { return nil }
            this.keys.insert(key, at: index)
            this.values.insert(node, at: index)
            this.count += 1
            return this.keys.count > maxEntries ? this.splitLeaf() : nil
        }
        let index = this.childIndex(for: key)
        let before = this.children[index].count
        let split = modify(&this.children[index], key, body)
        let child = this.children[index]
        this.count += child.count - before
        if child.count == 0 {
            this.children.remove(at: index)
            this.keys.remove(at: index)
        } else if index == 0 {
            this.keys[0] = child.keys[0]
        }
        if let split {
            this.count += split.count
            this.children.insert(split, at: index + 1)
            this.keys.insert(split.keys[0], at: index + 1)
        } else if child.count > 0, child.keys.count < maxEntries / 4 {
            this.mergeSmallChild(at: index)
        }
        return this.children.count > maxEntries ? this.splitInner() : nil
    }

    private func splitLeaf() -> ChildPage {
        let half = keys.count / 2
        let right = ChildPage(leafKeys: Array(keys[half...]), values: Array(values[half...]))
        keys.removeSubrange(half...)
        values.removeSubrange(half...)
        count = keys.count
        return right
    }

    private func splitInner() -> ChildPage {
        let half = children.count / 2
        let right = ChildPage(children: Array(children[half...]))
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
        guard left.keys.count + right.keys.count <= ChildPage.maxEntries else { return }
        if !isKnownUniquelyReferenced(&children[leftIndex]) { children[leftIndex] = ChildPage(copying: left) }
        let merged = children[leftIndex]
        merged.keys.append(contentsOf: right.keys)
        merged.values.append(contentsOf: right.values)
        merged.children.append(contentsOf: right.children)
        merged.count += right.count
        children.remove(at: rightIndex)
        keys.remove(at: rightIndex)
    }
}
