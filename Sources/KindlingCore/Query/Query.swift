/// A query on the children of one location: an order, an optional range and an optional limit.
///
/// The same value serves every client: the wire object of the realtime protocol (`sp`, `sn`,
/// `sin`, `ep`, `en`, `ein`, `l`, `vf`, `i`), the REST parameters (`orderBy`, `startAt`, …), the
/// server's filtering of listens and gets, and the client's own event views.
public struct Query: Sendable, Hashable {
    /// What the children are ordered by.
    public var index: Index
    /// The lower end of the range, if any.
    public var start: QueryBound?
    /// The upper end of the range, if any.
    public var end: QueryBound?
    /// The window size and which end it is taken from, if any.
    public var limit: QueryLimit?

    public init(index: Index = .priority, start: QueryBound? = nil, end: QueryBound? = nil, limit: QueryLimit? = nil) {
        self.index = index
        self.start = start
        self.end = end
        self.limit = limit
    }

    /// The whole location, in priority order.
    public static let all = Query()

    /// True when the query returns every child (an order alone does not filter).
    public var loadsAllData: Bool { start == nil && end == nil && limit == nil }

    /// True for the plain listen the SDKs send without `q` or a tag.
    public var isDefault: Bool { loadsAllData && index == .priority }

    /// Compares a bound with a child: negative when the bound sorts before the child.
    ///
    /// The bound is a "post" `(value, name)`: ties on the indexed value are broken by comparing
    /// the name with the child's key, where a missing start name sorts before every key and a
    /// missing end name after. On the key index the value itself is the key.
    public func compare(_ bound: QueryBound, toChild key: Key, _ node: Node) -> Int {
        if case .key = index {
            // Key bounds are strings (the parsers insist); anything else sorts below every key.
            guard case .string(let text)? = bound.value.leaf else { return -1 }
            return Key.compare(Key(unchecked: text), key)
        }
        return Self.compare(bound, toIndexed: index.indexedValue(of: node), key)
    }

    /// `compare(_:toChild:)` for a child whose indexed value was already read (not on the key
    /// index).
    static func compare(_ bound: QueryBound, toIndexed value: Node, _ key: Key) -> Int {
        let order = NodeOrder.compare(bound.value, value)
        if order != 0 { return order }
        switch bound.name {
        case .min: return -1
        case .max: return 1
        case .key(let name): return Key.compare(name, key)
        }
    }

    /// True when the child lies inside the range (the limit aside).
    public func matches(_ key: Key, _ node: Node) -> Bool {
        isInRange { compare($0, toChild: key, node) }
    }

    /// `matches` for a child whose indexed value was already read (not on the key index).
    func contains(indexed value: Node, _ key: Key) -> Bool {
        isInRange { Self.compare($0, toIndexed: value, key) }
    }

    /// True when neither bound excludes the child `compare` compares bounds with.
    private func isInRange(_ compare: (QueryBound) -> Int) -> Bool {
        if let start {
            let order = compare(start)
            if order > 0 || (order == 0 && !start.inclusive) { return false }
        }
        if let end {
            let order = compare(end)
            if order < 0 || (order == 0 && !end.inclusive) { return false }
        }
        return true
    }

    /// The children of `node` that the query returns, in the query's order. A leaf has none.
    /// On the key order this reads ranks from the children map, O(log n + k). Other orders scan
    /// all n children (a `SortedIndex` answers those in O(log n + k)).
    public func window(of node: Node) -> [(key: Key, node: Node)] {
        let children = node.children
        if case .key = index { return keyWindow(children) }
        return scan(children).map { (key: $0.key.childKey, node: $0.node) }
    }

    /// The children in range on an order other than the key's, in query order, each with its
    /// position in key order. Each child's indexed value is read once: with a limit of k only the
    /// best k are kept while scanning, O(n log k); else the matching children are sorted as
    /// records of plain fields and an array index, so the sort moves no nodes and most
    /// comparisons read none.
    private func scan(_ children: ChildMap) -> [ScannedChild] {
        // A limit near the number of children keeps most of them: sorting them all and cutting
        // costs less than a heap that large.
        if let limit, limit.count <= 1024 || limit.count < children.count / 8 {
            guard limit.count > 0 else { return [] }
            var kept = WindowSelection(keeping: limit.count, fromEnd: limit.fromEnd)
            for (position, (key, child)) in children.enumerated() {
                let value = index.indexedValue(of: child)
                if contains(indexed: value, key) { kept.offer(ScannedChild(value: value, key: key, node: child, position: position)) }
            }
            return kept.window()
        }
        var matching: [ScannedChild] = []
        for (position, (key, child)) in children.enumerated() {
            let value = index.indexedValue(of: child)
            if contains(indexed: value, key) { matching.append(ScannedChild(value: value, key: key, node: child, position: position)) }
        }
        var order = matching.indices.map { (fields: matching[$0].sortFields, entry: $0) }
        matching.withUnsafeBufferPointer { entries in
            order.sort { lhs, rhs in
                lhs.fields.compare(rhs.fields) { NodeOrder.compare(entries[lhs.entry].key.value, entries[rhs.entry].key.value) } < 0
            }
        }
        let sorted = order.map { matching[$0.entry] }
        guard let limit, sorted.count > limit.count else { return sorted }
        return limit.fromEnd ? Array(sorted.suffix(limit.count)) : Array(sorted.prefix(limit.count))
    }

    private func keyWindow(_ children: ChildMap) -> [(key: Key, node: Node)] {
        var low = 0
        var high = children.count
        if let start, case .string(let text)? = start.value.leaf {
            let key = Key(unchecked: text)
            low = children.rank(of: key) + (!start.inclusive && children[key] != nil ? 1 : 0)
        }
        if let end {
            guard case .string(let text)? = end.value.leaf else { return [] }
            let key = Key(unchecked: text)
            high = children.rank(of: key) + (end.inclusive && children[key] != nil ? 1 : 0)
        }
        guard low < high else { return [] }
        if let limit { (low, high) = limit.clamp(low, high) }
        return (low..<high).map { children.entry(at: $0) }
    }

    /// The query's result as a node: the window's children, without the location's priority
    /// (queries do not carry priorities, as in the SDKs).
    public func result(of node: Node) -> Node {
        if loadsAllData { return node.isLeaf ? node : Node(map: node.children, priority: nil) }
        if case .key = index { return Node(children: window(of: node).lazy.map { ($0.key, $0.node) }) }
        // Built in key order, the order the node keeps: appending, not inserting.
        let picked = scan(node.children).sorted { $0.position < $1.position }
        return Node(children: picked.lazy.map { ($0.key.childKey, $0.node) })
    }
}

/// One end of a query's range.
public struct QueryBound: Sendable, Hashable {
    /// The indexed value (null, a boolean, a number or a string; for the key index, the key).
    public var value: Node
    /// The key that breaks ties on `value`.
    public var name: BoundName
    /// False for `startAfter` / `endBefore`.
    public var inclusive: Bool

    public init(value: Node, name: BoundName, inclusive: Bool = true) {
        self.value = value
        self.name = name
        self.inclusive = inclusive
    }
}

/// The tie-breaking name of a bound: a key, or the sentinels below and above every key.
public enum BoundName: Sendable, Hashable {
    case min
    case max
    case key(Key)

    /// The wire text: `[MIN_NAME]`, `[MAX_NAME]` or the key.
    public var wireText: String {
        switch self {
        case .min: return "[MIN_NAME]"
        case .max: return "[MAX_NAME]"
        case .key(let key): return key.string
        }
    }

    init(wireText: String) {
        switch wireText {
        case "[MIN_NAME]": self = .min
        case "[MAX_NAME]": self = .max
        default: self = .key(Key(unchecked: wireText))
        }
    }
}

/// A window size, from the first or the last child in query order.
public struct QueryLimit: Sendable, Hashable {
    /// The largest count a client may ask for, on the wire (`l`) and over REST alike: 2³¹−1, the
    /// SDKs' own bound. Larger counts are refused as invalid queries, never clamped.
    public static let maxCount = Int(Int32.max)

    public var count: Int
    /// True for `limitToLast` (`vf: "r"`).
    public var fromEnd: Bool

    public init(count: Int, fromEnd: Bool) {
        self.count = count
        self.fromEnd = fromEnd
    }

    /// The ranks `low..<high` cut to this limit's window. Written so no count can overflow: the
    /// window is only cut when the count is smaller than the range, and a negative count is none.
    func clamp(_ low: Int, _ high: Int) -> (low: Int, high: Int) {
        let wanted = max(0, count)
        guard wanted < high - low else { return (low, high) }
        return fromEnd ? (high - wanted, high) : (low, low + wanted)
    }
}

extension QueryBound {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(value.leaf)
        hasher.combine(name)
        hasher.combine(inclusive)
    }
}
