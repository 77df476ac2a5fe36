import KindlingCore

/// The tags of filtered queries: the server labels data for such a query with its tag, so that
/// data it filtered is never taken for the complete data at the location.
struct QueryTags: Sendable {
    /// A query at a location, by its identifier.
    struct QueryKey: Sendable, Hashable {
        var path: Path
        var queryID: String
    }

    private var tagsByQuery: [QueryKey: Int] = [:]
    private var queriesByTag: [Int: QueryKey] = [:]
    /// Tags count up from 1 for the life of the tree and are never reused.
    private var nextTag = 1

    /// Gives the query a new tag.
    mutating func assign(path: Path, query: Query) {
        let key = QueryKey(path: path, queryID: query.identifier)
        let tag = nextTag
        nextTag += 1
        tagsByQuery[key] = tag
        queriesByTag[tag] = key
    }

    func tag(path: Path, query: Query) -> Int? {
        tagsByQuery[QueryKey(path: path, queryID: query.identifier)]
    }

    func query(for tag: Int) -> QueryKey? { queriesByTag[tag] }

    /// Forgets the tag of a query that is no longer listened to.
    mutating func remove(path: Path, query: Query) {
        guard !query.loadsAllData,
            let tag = tagsByQuery.removeValue(forKey: QueryKey(path: path, queryID: query.identifier))
        else { return }
        queriesByTag[tag] = nil
    }
}
