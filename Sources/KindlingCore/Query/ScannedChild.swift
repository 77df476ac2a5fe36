/// A child met while a query scans a location: its indexed value and key, read once, and its
/// position among the location's children in key order, so a result node can be built in the
/// order it keeps.
///
/// The value's type rank and, for a number, the number are kept beside it: most comparisons of
/// a sort are then settled on plain fields, without reading the nodes.
struct ScannedChild {
    let key: IndexKey
    let node: Node
    let position: Int
    private let rank: Int
    private let number: Double

    init(value: Node, key: Key, node: Node, position: Int) {
        self.key = IndexKey(value: value, name: .key(key))
        self.node = node
        self.position = position
        rank = NodeOrder.rank(value)
        if case .number(let number)? = value.leaf { self.number = number } else { number = 0 }
    }

    /// Query order: the indexed value in the type order, then the key (as `IndexKey.compare`).
    static func compare(_ lhs: borrowing ScannedChild, _ rhs: borrowing ScannedChild) -> Int {
        lhs.sortFields.compare(rhs.sortFields) { NodeOrder.compare(lhs.key.value, rhs.key.value) }
    }

    /// The plain fields that settle most comparisons, for sorting without touching the nodes.
    var sortFields: SortFields { SortFields(rank: rank, number: number, position: position) }

    struct SortFields {
        let rank: Int
        let number: Double
        /// Children of one location are scanned in key order: their positions order their keys.
        let position: Int

        /// Query order; `text` compares the two values when both are strings, the one case
        /// these fields cannot settle.
        func compare(_ other: SortFields, text: () -> Int) -> Int {
            if rank != other.rank { return rank < other.rank ? -1 : 1 }
            if rank == NodeOrder.numberRank, number != other.number { return number < other.number ? -1 : 1 }
            if rank == NodeOrder.stringRank {
                let order = text()
                if order != 0 { return order }
            }
            return position < other.position ? -1 : (position > other.position ? 1 : 0)
        }
    }
}
