/// What identifies a listen within one subscriber: the location and the query (the SDKs
/// identify listens by path and query object).
public struct ListenID: Sendable, Hashable {
    public var path: Path
    public var query: Query

    public init(path: Path, query: Query) {
        self.path = path
        self.query = query
    }

    /// True when the listen gets the location's full data: queries that only order the data are
    /// served like a plain listen.
    public var isPlain: Bool { query.loadsAllData }
}

/// The listens registered at one location.
struct LocationListens<Subscriber: Hashable & Sendable>: Sendable {
    /// Subscribers with a plain listen here, and how many: an order-only query and the default
    /// listen at one path are two listens with one copy of the data.
    var plain: [Subscriber: Int] = [:]
    /// Filtered queries here, with their recipients and the window last sent.
    var queries: [Query: QueryView<Subscriber>] = [:]

    var isEmpty: Bool { plain.isEmpty && queries.isEmpty }
}

/// A filtered query listened to at one location: who listens (with their tags) and the window
/// they were last sent, to tell whether a write changed it.
struct QueryView<Subscriber: Hashable & Sendable>: Sendable {
    var tags: [Subscriber: Int?] = [:]
    var window: [(key: Key, node: Node)] = []

    var recipients: [Delivery<Subscriber>.Recipient] {
        tags.map { Delivery.Recipient(subscriber: $0.key, tag: $0.value) }
    }

    /// True when `other` holds the same children with the same data.
    func sameWindow(_ other: [(key: Key, node: Node)]) -> Bool {
        window.count == other.count && zip(window, other).allSatisfy { $0.key == $1.key && $0.node == $1.node }
    }
}
