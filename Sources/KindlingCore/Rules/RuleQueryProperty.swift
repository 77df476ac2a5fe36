/// The properties of the `query` variable (rules spec §5.7), read from a Kindling `Query`.
enum RuleQueryProperty: String, Sendable {
    case orderByKey
    case orderByPriority
    case orderByValue
    case orderByChild
    case startAt
    case startAfter
    case endAt
    case endBefore
    case equalTo
    case limitToFirst
    case limitToLast

    var type: RuleType {
        switch self {
        case .orderByKey, .orderByPriority, .orderByValue: return .boolean
        default: return .primitive
        }
    }

    /// The property's value for `query` (nil: a plain read, ordered by key).
    ///
    /// The SDKs never send the priority index (it is their default), so a Kindling query on
    /// `.priority` usually means "no order given", which rules see as `orderByKey` (the Firebase
    /// docs: `limitToFirst(1000)` alone "would succeed (default order by key)"). Only a priority
    /// query with range bounds (`startAt` and friends compare priorities when no order is given)
    /// reads as `orderByPriority`.
    func value(of query: Query?) -> RuleValue {
        let query = query ?? Query()
        let byDefault = query.index == .priority && query.start == nil && query.end == nil
        switch self {
        case .orderByKey: return .bool(byDefault || query.index == .key)
        case .orderByPriority: return .bool(!byDefault && query.index == .priority)
        case .orderByValue: return .bool(query.index == .value)
        case .orderByChild:
            if case .child(let path) = query.index { return .string(path.relativeString) }
            return .null
        case .equalTo:
            guard let start = query.start, let end = query.end, isEqualTo(start, end) else { return .null }
            return RuleQueryProperty.bound(start)
        case .startAt:
            guard let start = query.start, start.inclusive else { return .null }
            return RuleQueryProperty.bound(start)
        case .startAfter:
            guard let start = query.start, !start.inclusive else { return .null }
            return RuleQueryProperty.bound(start)
        case .endAt:
            guard let end = query.end, end.inclusive else { return .null }
            return RuleQueryProperty.bound(end)
        case .endBefore:
            guard let end = query.end, !end.inclusive else { return .null }
            return RuleQueryProperty.bound(end)
        case .limitToFirst:
            guard let limit = query.limit, !limit.fromEnd else { return .null }
            return .number(Double(limit.count))
        case .limitToLast:
            guard let limit = query.limit, limit.fromEnd else { return .null }
            return .number(Double(limit.count))
        }
    }

    /// `equalTo(v)` arrives as an inclusive start and end on the same value.
    private func isEqualTo(_ start: QueryBound, _ end: QueryBound) -> Bool {
        start.inclusive && end.inclusive && start.value == end.value
    }

    private static func bound(_ bound: QueryBound) -> RuleValue {
        guard let leaf = bound.value.leaf else { return .null }
        return RuleValue(leaf)
    }
}
