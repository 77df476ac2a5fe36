import KindlingCore

/// A listen the client must hold on the server: a location, the query sent with it, and the tag
/// the server puts on the data it sends for a filtered query.
public struct ServerListen: Sendable, Hashable, CustomStringConvertible {
    public var path: Path
    /// The query to send: a query that loads all data is listened to as the default query (the
    /// order is applied locally).
    public var query: Query
    /// Set for filtered queries only; tagged data goes to that query's view alone.
    public var tag: Int?

    public init(path: Path, query: Query, tag: Int?) {
        self.path = path
        self.query = query
        self.tag = tag
    }

    public var description: String {
        "\(path) \(query.identifier)" + (tag.map { " tag \($0)" } ?? "")
    }

    public static func == (lhs: ServerListen, rhs: ServerListen) -> Bool {
        lhs.path == rhs.path && lhs.query.identifier == rhs.query.identifier && lhs.tag == rhs.tag
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(query.identifier)
        hasher.combine(tag)
    }
}

/// A change to the set of server listens, for the SDK to send (`q` to start, `n` to stop).
public enum ListenChange: Sendable, Hashable {
    case start(ServerListen)
    case stop(ServerListen)
}
