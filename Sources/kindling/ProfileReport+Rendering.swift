import Foundation
import KindlingCore

/// The report's tables and how it is printed: as text (the Firebase CLI's layout and titles)
/// or as JSON (its `--json` form: each table's legend, rows and note).
extension ProfileReport {
    /// One table of the report: its column names, its rows (numbers where the Firebase CLI
    /// gives numbers, so the JSON form matches its own) and the note printed with it.
    struct Table: Equatable {
        var legend: [String]
        var rows: [[JSONValue]] = []
        var note: String?
    }

    static let speedNote =
        "NOTE: Times are measured by the server, in milliseconds to the microsecond; they are not the latency a client sees. Pending time is how long a request waited between arriving and starting to run."
    static let bandwidthNote =
        "NOTE: Bytes are the size of the data read, written and sent to listeners, as JSON: an estimate of the traffic, not a measure of any bill."
    /// A path with at least this many siblings is folded with them into `$wildcard`.
    static let collapseThreshold = 25

    // MARK: Tables

    func readSpeedTable(collapse: Bool) -> Table { speedTable(readSpeed, denied: true, collapse: collapse) }
    func writeSpeedTable(collapse: Bool) -> Table { speedTable(writeSpeed, denied: true, collapse: collapse) }
    func broadcastSpeedTable(collapse: Bool) -> Table { speedTable(broadcastSpeed, denied: false, collapse: collapse) }
    func unlistenSpeedTable(collapse: Bool) -> Table { speedTable(unlistenSpeed, denied: false, collapse: collapse) }
    func connectSpeedTable() -> Table { unpathedSpeedTable(connectSpeed) }
    func disconnectSpeedTable() -> Table { unpathedSpeedTable(disconnectSpeed) }
    func downloadedTable(collapse: Bool) -> Table { bandwidthTable(downloaded, collapse: collapse) }
    func uploadedTable(collapse: Bool) -> Table { bandwidthTable(uploaded, collapse: collapse) }

    /// Speeds by path, slowest on average first.
    private func speedTable(_ speeds: OrderedPaths<Speed>, denied: Bool, collapse: Bool) -> Table {
        var table = Table(legend: ["Path", "Count", "Average Execution Speed", "Average Pending Time"] + (denied ? ["Permission Denied"] : []))
        let entries = Self.collapsed(speeds, collapse: collapse, combine: +).entries
        for (path, speed) in Self.sortedDescending(entries, by: { $0.millis / Double($0.times) }) {
            var row: [JSONValue] = [
                .string(path), .number(Double(speed.times)), .string(Self.formatNumber(speed.millis / Double(speed.times)) + " ms"),
                .string(Self.formatNumber(speed.pendingCount == 0 ? 0 : speed.pendingTime / Double(speed.pendingCount)) + " ms"),
            ]
            if denied { row.append(.string(Self.formatNumber(Double(speed.rejected)))) }
            table.rows.append(row)
        }
        return table
    }

    /// Connections coming and going: one row, when there were any.
    private func unpathedSpeedTable(_ speed: Speed?) -> Table {
        var table = Table(legend: ["Count", "Average Execution Speed", "Average Pending Time"])
        if let speed, speed.times > 0 {
            table.rows.append([
                .number(Double(speed.times)), .string(Self.formatNumber(speed.millis / Double(speed.times)) + " ms"),
                .string(Self.formatNumber(speed.pendingCount == 0 ? 0 : speed.pendingTime / Double(speed.pendingCount)) + " ms"),
            ])
        }
        return table
    }

    /// Bytes by path, most first.
    private func bandwidthTable(_ bandwidth: OrderedPaths<Bandwidth>, collapse: Bool) -> Table {
        var table = Table(legend: ["Path", "Total", "Count", "Average"], note: Self.bandwidthNote)
        let entries = Self.collapsed(bandwidth, collapse: collapse, combine: +).entries
        for (path, moved) in Self.sortedDescending(entries, by: \.bytes) {
            table.rows.append([
                .string(path), .string(Self.formatBytes(moved.bytes)), .string(Self.formatNumber(Double(moved.times))),
                .string(Self.formatBytes(moved.bytes / Double(moved.times))),
            ])
        }
        return table
    }

    /// Unindexed queries by path and index, in the order they first came.
    func unindexedTable(collapse: Bool) -> Table {
        var table = Table(legend: ["Path", "Index", "Count"])
        let merged = Self.collapsed(unindexed, collapse: collapse) { lhs, rhs in
            var merged = lhs
            for (index, query) in rhs.entries { merged.update(index, initial: UnindexedQuery(query: query.query)) { $0.times += query.times } }
            return merged
        }
        for (path, queries) in merged.entries {
            for (_, query) in queries.entries {
                table.rows.append([.string(path), .string(Self.readableIndex(query.query)), .string(Self.formatNumber(Double(query.times)))])
            }
        }
        return table
    }

    /// Folds paths level by level: where one prefix has `collapseThreshold` or more distinct
    /// segments at a level, they become `$wildcard` and their values are combined.
    static func collapsed<Value>(
        _ table: OrderedPaths<Value>, collapse: Bool, from level: Int = 1, combine: (Value, Value) -> Value
    ) -> OrderedPaths<Value> {
        guard collapse else { return table }
        let all = table.paths.map { path in path.split(separator: "/").map(String.init) }
        let deep = all.filter { $0.count > level }
        guard !deep.isEmpty else { return table }
        var siblings: [String: Set<String>] = [:]
        for segments in deep { siblings[pathString(Array(segments[..<level])), default: []].insert(segments[level]) }
        var result = OrderedPaths<Value>()
        for segments in deep {
            let prefix = Array(segments[..<level])
            guard let value = table[pathString(segments)] else { continue }
            if (siblings[pathString(prefix)]?.count ?? 0) >= collapseThreshold {
                let folded = pathString(prefix + ["$wildcard"] + segments[(level + 1)...])
                result[folded] = result[folded].map { combine($0, value) } ?? value
            } else {
                result[pathString(segments)] = value
            }
        }
        for segments in all where segments.count <= level {
            result[pathString(segments)] = table[pathString(segments)]
        }
        return collapsed(result, collapse: collapse, from: level + 1, combine: combine)
    }

    /// `entries` with the largest `key` first, ties in their order.
    private static func sortedDescending<Value>(_ entries: [(path: String, value: Value)], by key: (Value) -> Double) -> [(String, Value)] {
        entries.enumerated()
            .sorted { lhs, rhs in
                let (left, right) = (key(lhs.element.value), key(rhs.element.value))
                return left != right ? left > right : lhs.offset < rhs.offset
            }
            .map { ($0.element.path, $0.element.value) }
    }

    // MARK: Numbers

    /// Two decimals (dropped when both are zero) and commas between thousands: `3,123,423,232.42`.
    static func formatNumber(_ number: Double) -> String {
        guard number.isFinite, abs(number) < 1e21 else { return JSNumberFormat.string(number) }
        let hundredths = (abs(number) * 100).rounded(.toNearestOrAwayFromZero)
        let whole = (hundredths / 100).rounded(.down)
        let fraction = Int(hundredths - whole * 100)
        var digits = String(format: "%.0f", whole)
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        let sign = number < 0 && hundredths > 0 ? "-" : ""
        let integer = sign + digits + grouped
        return fraction == 0 ? integer : integer + "." + (fraction < 10 ? "0" : "") + String(fraction)
    }

    /// Bytes as `B` under a thousand, else in kB, MB, GB… (powers of 1,000) with two decimals.
    static func formatBytes(_ bytes: Double) -> String {
        guard (bytes + 0.5).rounded(.down) >= 1000 else { return JSNumberFormat.string(bytes) + " B" }
        let units = ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
        var value = bytes
        var unit = -1
        repeat {
            value /= 1000
            unit += 1
        } while abs(value) >= 1000 && unit < units.count - 1
        return formatNumber(value) + " " + units[unit]
    }

    /// A query's index as the unindexed-queries table names it: its `orderBy`, the child path
    /// it orders by, or `.value`.
    static func readableIndex(_ query: JSONValue) -> String {
        if let orderBy = query["orderBy"]?.stringValue, !orderBy.isEmpty { return orderBy }
        if case .array(let path)? = query["index"]?["path"] { return pathString(path.compactMap(\.stringValue)) }
        return ".value"
    }

    // MARK: Printing

    /// The report as text. `colour` adds the terminal's colours (bold yellow titles, yellow
    /// heads, grey rules).
    func text(collapse: Bool, colour: Bool) -> String {
        var out = ""
        func title(_ text: String) {
            out += (colour ? "\u{1B}[1m\u{1B}[33m" + text + "\u{1B}[39m\u{1B}[22m" : text) + "\n"
        }
        func table(_ name: String, _ table: Table) {
            title(name)
            let rows = table.rows.map { $0.map { cell in cell.stringValue ?? JSNumberFormat.string(cell.numberValue ?? 0) } }
            out += TextTable(head: table.legend, rows: rows, colour: colour).render() + "\n"
        }
        if operations == 0 {
            title("No operations were recorded.")
        } else {
            title("Report operations collected from \(Self.isoDate(startTime)) over \(JSNumberFormat.string(endTime - startTime)) ms.")
        }
        if dropped > 0 {
            out += "\(dropped) records were left out: the profiler read more slowly than the server made them.\n"
        }
        title("Speed Report\n")
        out += Self.speedNote + "\n\n"
        table("Read Speed", readSpeedTable(collapse: collapse))
        table("Write Speed", writeSpeedTable(collapse: collapse))
        table("Broadcast Speed", broadcastSpeedTable(collapse: collapse))
        table("Connect Speed", connectSpeedTable())
        table("Disconnect Speed", disconnectSpeedTable())
        table("Unlisten Speed", unlistenSpeedTable(collapse: collapse))
        title("Bandwidth Report\n")
        out += Self.bandwidthNote + "\n\n"
        table("Downloaded Bytes", downloadedTable(collapse: collapse))
        table("Uploaded Bytes", uploadedTable(collapse: collapse))
        table("Unindexed Queries", unindexedTable(collapse: collapse))
        return out
    }

    /// The report as JSON, in the Firebase CLI's `--json` form (two-space indents), with
    /// `droppedRecords` when the server left records out.
    func json(collapse: Bool) -> String {
        func member(_ name: String, _ table: Table, note: String? = ProfileReport.speedNote) -> JSONMember {
            var members = [
                JSONMember("legend", .array(table.legend.map(JSONValue.string))),
                JSONMember("data", .array(table.rows.map(JSONValue.array))),
            ]
            if let note = table.note ?? note { members.append(JSONMember("note", .string(note))) }
            return JSONMember(name, .object(members))
        }
        var members = [
            JSONMember("totalTime", .number(endTime - startTime)),
            member("readSpeed", readSpeedTable(collapse: collapse)),
            member("writeSpeed", writeSpeedTable(collapse: collapse)),
            member("broadcastSpeed", broadcastSpeedTable(collapse: collapse)),
            member("connectSpeed", connectSpeedTable()),
            member("disconnectSpeed", disconnectSpeedTable()),
            member("unlistenSpeed", unlistenSpeedTable(collapse: collapse)),
            member("downloadedBytes", downloadedTable(collapse: collapse)),
            member("uploadedBytes", uploadedTable(collapse: collapse)),
            member("unindexedQueries", unindexedTable(collapse: collapse), note: nil),
        ]
        if dropped > 0 { members.append(JSONMember("droppedRecords", .number(Double(dropped)))) }
        return Self.indented(.object(members), depth: 0)
    }

    /// `value` laid out as JavaScript's `JSON.stringify(value, null, 2)` lays it out.
    static func indented(_ value: JSONValue, depth: Int) -> String {
        let inner = String(repeating: "  ", count: depth + 1)
        let outer = String(repeating: "  ", count: depth)
        switch value {
        case .array(let elements):
            guard !elements.isEmpty else { return "[]" }
            return "[\n" + elements.map { inner + indented($0, depth: depth + 1) }.joined(separator: ",\n") + "\n" + outer + "]"
        case .object(let members):
            guard !members.isEmpty else { return "{}" }
            let lines = members.map { inner + JSONWriter.string(.string($0.key)) + ": " + indented($0.value, depth: depth + 1) }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + outer + "}"
        default:
            return JSONWriter.string(value)
        }
    }

    /// Milliseconds since 1970 as ISO 8601 in UTC, with milliseconds (`toISOString`).
    static func isoDate(_ milliseconds: Double) -> String {
        Date(timeIntervalSince1970: milliseconds / 1000).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}
