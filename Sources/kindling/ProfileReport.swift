import KindlingCore

/// The report `kindling profile` prints from a namespace's profiler records, built as the
/// Firebase CLI's `database:profile` builds its own from the same records: operation speeds by
/// kind and path, bytes down and up by path, and unindexed queries, with paths that have 25 or
/// more siblings folded into `$wildcard`.
///
/// Two deliberate differences: an unindexed query is counted each time it is asked (the
/// Firebase CLI's report starts each path's count again at every record, so it always shows 1),
/// and reads (`realtime-read`, `rest-read`) report theirs too, not only listens.
struct ProfileReport: Sendable {
    /// How often one kind of operation ran at one path, and how long it took and waited.
    struct Speed: Equatable {
        var times = 0
        var millis = 0.0
        var pendingCount = 0
        var pendingTime = 0.0
        var rejected = 0

        static func + (lhs: Speed, rhs: Speed) -> Speed {
            Speed(
                times: lhs.times + rhs.times, millis: lhs.millis + rhs.millis, pendingCount: lhs.pendingCount + rhs.pendingCount,
                pendingTime: lhs.pendingTime + rhs.pendingTime, rejected: lhs.rejected + rhs.rejected)
        }

        /// Counts a record: its `millis` and `pendingTime` when it has them, and whether the
        /// rules refused it (`allowed: false`).
        mutating func add(_ record: JSONValue) {
            times += 1
            if let value = record["millis"]?.numberValue { millis += value }
            if let value = record["pendingTime"]?.numberValue {
                pendingCount += 1
                pendingTime += value
            }
            if record["allowed"] == .bool(false) { rejected += 1 }
        }
    }

    /// How many records at one path moved how many bytes.
    struct Bandwidth: Equatable {
        var times = 0
        var bytes = 0.0

        static func + (lhs: Bandwidth, rhs: Bandwidth) -> Bandwidth {
            Bandwidth(times: lhs.times + rhs.times, bytes: lhs.bytes + rhs.bytes)
        }
    }

    /// One unindexed query (by its index) and how often it was asked.
    struct UnindexedQuery: Equatable {
        var times = 0
        var query: JSONValue
    }

    var readSpeed = OrderedPaths<Speed>()
    var writeSpeed = OrderedPaths<Speed>()
    var broadcastSpeed = OrderedPaths<Speed>()
    var unlistenSpeed = OrderedPaths<Speed>()
    var connectSpeed: Speed?
    var disconnectSpeed: Speed?
    /// Bytes sent to clients (reads, listens' first data, broadcasts) and received from them.
    var downloaded = OrderedPaths<Bandwidth>()
    var uploaded = OrderedPaths<Bandwidth>()
    /// Unindexed queries by path, then by their index's JSON.
    var unindexed = OrderedPaths<OrderedPaths<UnindexedQuery>>()
    /// The first and last records' timestamps (milliseconds since 1970).
    var startTime = 0.0
    var endTime = 0.0
    var operations = 0
    /// Records the server left out because the profiler read too slowly (its `gap` events).
    var dropped = 0

    /// `/` and the segments joined, as the reports name a path.
    static func pathString(_ segments: [String]) -> String {
        "/" + segments.joined(separator: "/")
    }

    /// Takes one record (an `event: log`'s data), or a `gap` (`{"dropped": N}`).
    mutating func add(_ record: JSONValue) {
        guard case .object = record else { return }
        if record["name"] == nil, let count = record["dropped"]?.numberValue {
            dropped += Int(exactly: count.rounded()) ?? 0
            return
        }
        let timestamp = record["timestamp"]?.numberValue ?? 0
        if startTime == 0 { startTime = timestamp }
        endTime = timestamp
        operations += 1
        var segments: [String] = []
        if case .array(let parts)? = record["path"] { segments = parts.compactMap(\.stringValue) }
        let path = Self.pathString(segments)
        let bytes = record["bytes"]?.numberValue ?? 0
        switch record["name"]?.stringValue {
        case "concurrent-connect": connectSpeed = (connectSpeed ?? Speed()).adding(record)
        case "concurrent-disconnect": disconnectSpeed = (disconnectSpeed ?? Speed()).adding(record)
        case "realtime-read", "rest-read", "listener-listen":
            readSpeed.update(path, initial: Speed()) { $0.add(record) }
            downloaded.update(path, initial: Bandwidth()) { $0 = $0 + Bandwidth(times: 1, bytes: bytes) }
            collectUnindexed(record, at: path)
        case "listener-broadcast":
            broadcastSpeed.update(path, initial: Speed()) { $0.add(record) }
            downloaded.update(path, initial: Bandwidth()) { $0 = $0 + Bandwidth(times: 1, bytes: bytes) }
        case "listener-unlisten":
            unlistenSpeed.update(path, initial: Speed()) { $0.add(record) }
        case "realtime-write", "realtime-transaction", "realtime-update", "rest-write", "rest-update":
            writeSpeed.update(path, initial: Speed()) { $0.add(record) }
            uploaded.update(path, initial: Bandwidth()) { $0 = $0 + Bandwidth(times: 1, bytes: bytes) }
        default:
            break
        }
    }

    /// Counts a query the record says no index answers, under its index.
    private mutating func collectUnindexed(_ record: JSONValue, at path: String) {
        guard record["unIndexed"] == .bool(true), case .array(let queries)? = record["querySet"], let query = queries.first else { return }
        let index = query["index"].map { JSONWriter.string($0) } ?? ""
        unindexed.update(path, initial: OrderedPaths()) { byIndex in
            byIndex.update(index, initial: UnindexedQuery(query: query)) { $0.times += 1 }
        }
    }

    /// Takes one line of a raw file (`--raw` output: one JSON object a line); a line that is
    /// not JSON is passed over, as the Firebase CLI passes it over.
    mutating func add(line: some Collection<UInt8>) {
        guard let record = try? JSONParser.parse(Array(line)) else { return }
        add(record)
    }
}

extension ProfileReport.Speed {
    /// This speed with `record` counted.
    func adding(_ record: JSONValue) -> Self {
        var speed = self
        speed.add(record)
        return speed
    }
}
