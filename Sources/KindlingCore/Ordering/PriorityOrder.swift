/// How priorities sort: none first, then numbers ascending, then strings in UTF-16 order.
public enum PriorityOrder {
    /// Negative, zero or positive as `lhs` sorts before, with or after `rhs`.
    public static func compare(_ lhs: Priority?, _ rhs: Priority?) -> Int {
        switch (lhs, rhs) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case let (.number(l)?, .number(r)?): return l < r ? -1 : (l > r ? 1 : 0)
        case (.number?, .string?): return -1
        case (.string?, .number?): return 1
        case let (.string(l)?, .string(r)?): return UTF16Order.compare(l, r).signum()
        }
    }
}
