/// Builds an `OrderedMap` from entries that arrive in strictly ascending key order, in O(n) and
/// without holding the entries twice: leaf pages are filled three quarters full as the entries
/// come, and stacked into inner pages at the end. Loading a snapshot of millions of children uses
/// it, so only the finished pages, never a second list of all the entries, are in memory.
struct OrderedMapBuilder<K: OrderedKey> {
    typealias Page = OrderedMapPage<K>

    /// The entries a bulk-built leaf page holds (three quarters of its room).
    static var pageFill: Int { Page.maxEntries * 3 / 4 }

    private static var fill: Int { pageFill }

    private var leaves: [Page] = []
    /// The leaf page being filled, made when its first entry comes.
    private var current: Page?
    private var remaining: Int

    /// `expectedCount` sizes the pages exactly for a map of that many entries (a four-child map
    /// gets a four-entry page); it is a hint, never trusted past one page.
    init(expectedCount: Int = 0) {
        remaining = expectedCount
    }

    /// The last key appended, to check the order of the next one against.
    var lastKey: K? { current?.lastKey ?? leaves.last?.lastKey }

    /// The first key appended.
    var firstKey: K? { leaves.first?.firstKey ?? current?.firstKey }

    /// Appends everything `other` holds, whose keys must all sort after this builder's. When
    /// this builder holds only full pages (a block of whole pages before), `other`'s pages are
    /// taken as they are; otherwise its entries are appended one by one.
    mutating func append(contentsOf other: consuming OrderedMapBuilder) {
        if current == nil {
            leaves.append(contentsOf: other.leaves)
            if var last = other.current {
                // Whoever handed `other` over may still hold it: the unfinished page, which this
                // builder goes on filling in place, is made its own first (a copy when shared).
                Page.reserve(&last, capacity: 0)
                current = last
            }
            return
        }
        for page in other.leaves + (other.current.map { [$0] } ?? []) {
            for index in 0..<page.entryCount {
                let (key, node) = page.entry(at: index)
                append(key, node)
            }
        }
    }

    /// Appends an entry; its key must sort after every key appended before, and `node` must not
    /// be empty.
    mutating func append(_ key: consuming K, _ node: consuming Node) {
        var page = current ?? Page.make(capacity: Swift.min(remaining, Self.fill))
        current = nil
        Page.append(key, node, to: &page)
        page.count += 1
        if page.entryCount == Self.fill {
            closePage(page)
        } else {
            current = page
        }
    }

    /// The finished map.
    mutating func finish() -> OrderedMap<K> {
        var map = OrderedMap<K>()
        let last = current
        current = nil
        // Most maps fit one page, which is then the root: no list of pages is made for them.
        guard !leaves.isEmpty else {
            map.root = last
            return map
        }
        if let last { closePage(last) }
        var level = leaves
        leaves = []
        while level.count > 1 {
            level = stride(from: 0, to: level.count, by: Self.fill).map { start in
                Page.inner(Array(level[start..<Swift.min(start + Self.fill, level.count)]))
            }
        }
        map.root = level[0]
        return map
    }

    private mutating func closePage(_ page: Page) {
        leaves.append(page)
        remaining = Swift.max(remaining - page.entryCount, 0)
    }
}
