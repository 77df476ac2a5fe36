import KindlingCore

/// The profiler stream's bytes: server-sent events as the Firebase CLI reads them, one
/// `event: log` per record with the record as one line of compact JSON, `\n` line endings (see
/// `EventStreamEncoding`).
extension ProfileRecord {
    /// `event: log` for each record, one after another.
    static func events(_ records: [ProfileRecord]) -> [UInt8] {
        var writer = JSONWriter()
        for record in records {
            writer.writeRaw("event: log\ndata: ".utf8)
            record.write(to: &writer)
            writer.writeRaw("\n\n".utf8)
        }
        return writer.bytes
    }

    /// Tells the profiler that `dropped` records were left out before the next ones, because it
    /// read more slowly than the server made them. Its data has no `name`, so a report that
    /// reads every `data:` line (the Firebase CLI's) puts it in none of its tables.
    static func gap(dropped: Int, timestamp: Int64) -> [UInt8] {
        Array("event: gap\ndata: {\"dropped\":\(dropped),\"timestamp\":\(timestamp)}\n\n".utf8)
    }

    /// The record's JSON: `name`, `timestamp` and `path` (its segments, as the CLI joins them),
    /// then the fields it has. Times are milliseconds with microseconds as decimals: the CLI
    /// sums and averages them as numbers, and most operations here take well under one.
    func write(to writer: inout JSONWriter) {
        writer.writeRaw(#"{"name":"#.utf8)
        writer.write(name.rawValue)
        writer.writeRaw(#","timestamp":"#.utf8)
        writer.write(Double(timestamp))
        if let path {
            writer.writeRaw(#","path":["#.utf8)
            for (index, key) in path.keys.enumerated() {
                if index > 0 { writer.writeRaw(",".utf8) }
                writer.write(key.string)
            }
            writer.writeRaw("]".utf8)
        }
        if let nanoseconds {
            writer.writeRaw(#","millis":"#.utf8)
            writer.write(Self.milliseconds(nanoseconds))
        }
        if let pendingNanoseconds {
            writer.writeRaw(#","pendingTime":"#.utf8)
            writer.write(Self.milliseconds(pendingNanoseconds))
        }
        if let bytes {
            writer.writeRaw(#","bytes":"#.utf8)
            writer.write(Double(bytes))
        }
        if let allowed {
            writer.writeRaw(#","allowed":"#.utf8)
            writer.write(allowed)
        }
        if let query {
            writer.writeRaw(#","querySet":["#.utf8)
            Self.write(query, to: &writer)
            writer.writeRaw("]".utf8)
        }
        if let unIndexed {
            writer.writeRaw(#","unIndexed":"#.utf8)
            writer.write(unIndexed)
        }
        if let clientsUpdated {
            writer.writeRaw(#","clientsUpdated":"#.utf8)
            writer.write(Double(clientsUpdated))
        }
        if let client {
            writer.writeRaw(#","client":{"remoteAddress":"#.utf8)
            writer.write(client)
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("}".utf8)
    }

    /// Nanoseconds as milliseconds, rounded to the microsecond.
    static func milliseconds(_ nanoseconds: UInt64) -> Double {
        (Double(nanoseconds) / 1000).rounded() / 1000
    }

    /// One query of `querySet`: `index` as the CLI's unindexed-queries table names it (`path`
    /// the child's segments, `{}` for the value; `orderBy` names the key and priority orders),
    /// whether it is the plain query of the whole location (`default`), and the query as the
    /// SDKs send it (`q`).
    private static func write(_ query: Query, to writer: inout JSONWriter) {
        writer.writeRaw(#"{"index":"#.utf8)
        switch query.index {
        case .child(let path):
            writer.writeRaw(#"{"path":["#.utf8)
            for (index, key) in path.keys.enumerated() {
                if index > 0 { writer.writeRaw(",".utf8) }
                writer.write(key.string)
            }
            writer.writeRaw("]}".utf8)
        case .value:
            writer.writeRaw("{}".utf8)
        case .key:
            writer.writeRaw(#"{"key":true},"orderBy":".key""#.utf8)
        case .priority:
            writer.writeRaw(#"{"priority":true},"orderBy":".priority""#.utf8)
        }
        writer.writeRaw(#","default":"#.utf8)
        writer.write(query.loadsAllData)
        writer.writeRaw(#","q":"#.utf8)
        writer.write(query.wireObject)
        writer.writeRaw("}".utf8)
    }
}
