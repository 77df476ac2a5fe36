/// One page of an `OrderedMap`: a leaf holding sorted entries, or an inner page holding child
/// pages and, for each, a key no greater than any key inside it.
///
/// A page is one allocation: the header, then its entries in place. Most maps are a node's few
/// children (a user's four fields), so a page sized to its entries, without separate key and node
/// arrays, is most of what the tree costs in memory. A page grows by moving into a bigger
/// allocation, which is why the mutating operations take the page `inout`. A page is changed
/// only while uniquely referenced (copy-on-write), by the one holder of that reference.
final class OrderedMapPage<K: OrderedKey>: ManagedBuffer<OrderedMapPageHeader<K>, (key: K, node: Node)> {
    typealias Entry = (key: K, node: Node)

    static var maxEntries: Int { 64 }

    deinit {
        _ = withUnsafeMutablePointers { header, entries in entries.deinitialize(count: Int(header.pointee.entryCount)) }
    }

    /// An empty page with room for `capacity` entries (or what the allocator rounds it up to).
    static func make(capacity: Int, children: [OrderedMapPage] = []) -> OrderedMapPage {
        let buffer = create(minimumCapacity: Swift.max(capacity, 1)) { buffer in
            OrderedMapPageHeader(count: 0, entryCount: 0, capacity: Int32(clamping: buffer.capacity), children: children)
        }
        return unsafeDowncast(buffer, to: OrderedMapPage.self)
    }

    /// A leaf page of one entry.
    static func leaf(_ key: K, _ node: Node) -> OrderedMapPage {
        var page = make(capacity: 1)
        append(key, node, to: &page)
        page.count = 1
        return page
    }

    /// An inner page over `children`, which must be non-empty and in key order.
    static func inner(_ children: [OrderedMapPage]) -> OrderedMapPage {
        var page = make(capacity: children.count, children: children)
        for child in children { append(child.firstKey, .empty, to: &page) }
        page.count = children.reduce(0) { $0 + $1.count }
        return page
    }

    /// The header, through its address: `ManagedBuffer.header` is a stored class property, and
    /// every access to one costs a runtime exclusivity check (6% of a snapshot load). The
    /// address stays valid as long as the page lives, and a page changes only while unshared.
    @inline(__always)
    var fields: UnsafeMutablePointer<OrderedMapPageHeader<K>> { withUnsafeMutablePointerToHeader { $0 } }

    /// The entries' address, valid as long as the page lives (for moving consumed values in,
    /// which a closure could not do).
    @inline(__always)
    var elements: UnsafeMutablePointer<Entry> { withUnsafeMutablePointerToElements { $0 } }

    var count: Int {
        get { fields.pointee.count }
        set { fields.pointee.count = newValue }
    }

    var entryCount: Int { Int(fields.pointee.entryCount) }

    var children: [OrderedMapPage] { fields.pointee.children }

    var isLeaf: Bool { fields.pointee.children.isEmpty }

    func key(at index: Int) -> K { withUnsafeMutablePointerToElements { $0[index].key } }

    func node(at index: Int) -> Node { withUnsafeMutablePointerToElements { $0[index].node } }

    func entry(at index: Int) -> Entry { withUnsafeMutablePointerToElements { $0[index] } }

    var firstKey: K { key(at: 0) }

    var lastKey: K? { entryCount > 0 ? key(at: entryCount - 1) : nil }

    /// Binary search among this page's keys: the insertion index and whether it is a match.
    @inline(__always)
    func search(_ key: K) -> (index: Int, found: Bool) {
        let entryCount = entryCount
        return withUnsafeMutablePointerToElements { entries in
            var low = 0
            var high = entryCount
            while low < high {
                let mid = (low + high) / 2
                let order = K.compare(entries[mid].key, key)
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
        return found ? index : Swift.max(index - 1, 0)
    }

    /// The node under `key` in the pages below `root`, walked without a reference count per page:
    /// the caller keeps `root` alive, each page keeps its children, and pages that anyone shares
    /// never change, so every page on the way outlives the walk.
    static func find(_ key: K, below root: Unmanaged<OrderedMapPage>) -> Node? {
        var page = root
        while true {
            let next: Unmanaged<OrderedMapPage>? = page._withUnsafeGuaranteedRef { page in
                let children = page.fields
                guard !children.pointee.children.isEmpty else { return nil }
                let index = page.childIndex(for: key)
                return children.pointee.children.withUnsafeBufferPointer { Unmanaged.passUnretained($0[index]) }
            }
            guard let next else { break }
            page = next
        }
        return page._withUnsafeGuaranteedRef { page in
            let (index, found) = page.search(key)
            return found ? page.node(at: index) : nil
        }
    }

    /// Makes `page` unshared with room for `capacity` entries: left alone when it already is,
    /// moved into a bigger allocation when only the room is missing, copied when shared.
    static func reserve(_ page: inout OrderedMapPage, capacity: Int) {
        let unique = isKnownUniquelyReferenced(&page)
        if unique, capacity <= Int(page.fields.pointee.capacity) { return }
        let old = page
        let new = make(capacity: Swift.max(capacity, old.entryCount), children: old.fields.pointee.children)
        new.withUnsafeMutablePointers { header, entries in
            old.withUnsafeMutablePointers { oldHeader, oldEntries in
                let entryCount = oldHeader.pointee.entryCount
                if unique {
                    entries.moveInitialize(from: oldEntries, count: Int(entryCount))
                    oldHeader.pointee.entryCount = 0
                } else {
                    entries.initialize(from: oldEntries, count: Int(entryCount))
                }
                header.pointee.entryCount = entryCount
                header.pointee.count = oldHeader.pointee.count
            }
        }
        page = new
    }

    /// The capacity to grow a full page to: doubling, up to one past `maxEntries` (a page splits
    /// when it passes that).
    private static func grownCapacity(_ page: OrderedMapPage) -> Int {
        let doubled = Int(page.fields.pointee.capacity) * 2
        return doubled >= maxEntries ? maxEntries + 1 : Swift.max(doubled, 4)
    }

    /// Inserts an entry at `index` of an unshared page, growing it when full. Leaves `count` alone.
    /// The key and node are consumed, moved into the page without a copy.
    static func insert(_ key: consuming K, _ node: consuming Node, at index: Int, into page: inout OrderedMapPage) {
        if page.entryCount == Int(page.fields.pointee.capacity) { reserve(&page, capacity: grownCapacity(page)) }
        let (header, entries) = (page.fields, page.elements)
        let entryCount = Int(header.pointee.entryCount)
        (entries + index + 1).moveInitialize(from: entries + index, count: entryCount - index)
        (entries + index).initialize(to: (key, node))
        header.pointee.entryCount += 1
    }

    /// Appends an entry to an unshared page; leaves `count` alone.
    static func append(_ key: consuming K, _ node: consuming Node, to page: inout OrderedMapPage) {
        insert(key, node, at: page.entryCount, into: &page)
    }

    /// Removes the entry at `index` of an unshared page; leaves `count` alone.
    private func removeEntry(at index: Int) {
        withUnsafeMutablePointers { header, entries in
            let entryCount = Int(header.pointee.entryCount)
            (entries + index).deinitialize(count: 1)
            (entries + index).moveInitialize(from: entries + index + 1, count: entryCount - index - 1)
            header.pointee.entryCount -= 1
        }
    }

    /// Moves the entries from `start` on into a new page (with their child pages, for an inner
    /// page), leaving this unshared page with the ones before.
    private func splitOff(from start: Int) -> OrderedMapPage {
        let moved = entryCount - start
        var children: [OrderedMapPage] = []
        if !isLeaf {
            children = Array(fields.pointee.children[start...])
            fields.pointee.children.removeSubrange(start...)
        }
        let right = OrderedMapPage.make(capacity: moved, children: children)
        right.withUnsafeMutablePointers { rightHeader, rightEntries in
            withUnsafeMutablePointers { header, entries in
                rightEntries.moveInitialize(from: entries + start, count: moved)
                header.pointee.entryCount = Int32(start)
                rightHeader.pointee.entryCount = Int32(moved)
            }
        }
        right.count = right.isLeaf ? moved : right.fields.pointee.children.reduce(0) { $0 + $1.count }
        count -= right.count
        return right
    }

    /// Changes the entry for `key` below `page`, copying shared pages on the way down. Returns a
    /// new right sibling when the page had to split.
    static func modify(_ page: inout OrderedMapPage, _ key: K, _ body: (inout Node) -> Void) -> OrderedMapPage? {
        reserve(&page, capacity: 0)
        if page.isLeaf {
            let (index, found) = page.search(key)
            if found {
                let emptied = page.withUnsafeMutablePointerToElements { entries in
                    body(&entries[index].node)
                    return entries[index].node.isEmpty
                }
                if emptied {
                    page.removeEntry(at: index)
                    page.count -= 1
                }
                return nil
            }
            var node = Node.empty
            body(&node)
            if node.isEmpty { return nil }
            insert(key, node, at: index, into: &page)
            page.count += 1
            return page.entryCount > maxEntries ? page.splitOff(from: page.entryCount / 2) : nil
        }
        let index = page.childIndex(for: key)
        let before = page.fields.pointee.children[index].count
        let split = modify(&page.fields.pointee.children[index], key, body)
        let after = page.fields.pointee.children[index].count
        page.count += after - before
        if after == 0 {
            page.fields.pointee.children.remove(at: index)
            page.removeEntry(at: index)
        } else if index == 0 {
            let first = page.fields.pointee.children[0].firstKey
            page.withUnsafeMutablePointerToElements { $0[0].key = first }
        }
        if let split {
            page.count += split.count
            page.fields.pointee.children.insert(split, at: index + 1)
            insert(split.firstKey, .empty, at: index + 1, into: &page)
        } else if after > 0, page.fields.pointee.children[index].entryCount < maxEntries / 4 {
            page.mergeSmallChild(at: index)
        }
        return page.entryCount > maxEntries ? page.splitOff(from: page.entryCount / 2) : nil
    }

    /// Keeps pages from thinning out after removals: a small child merges into a neighbour when
    /// the two fit in one page.
    private func mergeSmallChild(at index: Int) {
        let neighbour = index + 1 < fields.pointee.children.count ? index + 1 : index - 1
        guard neighbour >= 0 else { return }
        let (leftIndex, rightIndex) = (Swift.min(index, neighbour), Swift.max(index, neighbour))
        let right = fields.pointee.children[rightIndex]
        let merged = fields.pointee.children[leftIndex].entryCount + right.entryCount
        guard merged <= OrderedMapPage.maxEntries else { return }
        OrderedMapPage.reserve(&fields.pointee.children[leftIndex], capacity: merged)
        let left = fields.pointee.children[leftIndex]
        left.withUnsafeMutablePointers { header, entries in
            right.withUnsafeMutablePointerToElements { rightEntries in
                (entries + Int(header.pointee.entryCount)).initialize(from: rightEntries, count: right.entryCount)
            }
            header.pointee.entryCount = Int32(merged)
            header.pointee.count += right.count
            header.pointee.children.append(contentsOf: right.fields.pointee.children)
        }
        fields.pointee.children.remove(at: rightIndex)
        removeEntry(at: rightIndex)
    }
}
