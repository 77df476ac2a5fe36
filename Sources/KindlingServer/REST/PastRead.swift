/// A REST read of the past (admin only): `GET /<path>.json?at=TIME` answers the data as it was at
/// that instant; `GET /<path>.json?changes=true&from=TIME&to=TIME&limit=N` lists the writes that
/// changed it in a window (`HistoryChange`). TIME is milliseconds since 1970 or ISO 8601.
public enum PastRead: Sendable, Equatable {
    case at(Int64)
    case changes(from: Int64, to: Int64, limit: Int)

    /// The most changes one request lists.
    public static let maxChangesListed = 10_000

    /// The past read `parameters` ask for, nil for a read of the present.
    init?(parameters: [String: String], method: RESTRequest.Method, isEventStream: Bool) throws(RESTError) {
        let at = parameters["at"]
        let changes = parameters["changes"]
        guard at != nil || changes != nil else { return nil }
        guard method == .get, !isEventStream else { throw RESTError(.badRequest, "at= and changes= are for GET requests only") }
        let queries = ["orderBy", "limitToFirst", "limitToLast", "startAt", "startAfter", "endAt", "endBefore", "equalTo"]
        if let query = queries.first(where: { parameters[$0] != nil }) {
            throw RESTError(.badRequest, "\(query)= cannot be combined with at= or changes=")
        }
        if let at {
            guard changes == nil else { throw RESTError(.badRequest, "use either at= or changes=, not both") }
            self = .at(try PastRead.instant(at, name: "at"))
            return
        }
        guard changes == "true" else { throw RESTError(.badRequest, "changes must be true") }
        let to = try parameters["to"].map { text throws(RESTError) in try PastRead.instant(text, name: "to") } ?? HistoryTime.now()
        let from = try parameters["from"].map { text throws(RESTError) in try PastRead.instant(text, name: "from") } ?? 0
        guard from <= to else { throw RESTError(.badRequest, "from must not be after to") }
        var limit = 100
        if let text = parameters["limit"] {
            guard let number = Int(text), (1...PastRead.maxChangesListed).contains(number) else {
                throw RESTError(.badRequest, "limit must be a whole number from 1 to \(PastRead.maxChangesListed)")
            }
            limit = number
        }
        self = .changes(from: from, to: to, limit: limit)
    }

    private static func instant(_ text: String, name: String) throws(RESTError) -> Int64 {
        guard let time = HistoryTime.parse(text) else {
            throw RESTError(.badRequest, "\(name) must be milliseconds since 1970 or an ISO 8601 time such as 2026-12-05T10:00:00Z")
        }
        return time
    }
}
