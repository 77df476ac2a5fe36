import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer

/// `kindling history`: the writes that changed a path in a window, newest last, from a running
/// server (admin) or a stopped server's data directory.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the writes that changed a path (at it, above it or below it) in a window of time.",
        discussion: """
            TIME is milliseconds since 1970 or ISO 8601 (2026-12-05T09:30:00Z). Each line: when, the write's \
            sequence number, what it did (set, remove, update), where, and its size. Restore an instant with \
            `kindling restore --at TIME`.
            Examples:
              kindling history /users --ns app --from 2026-12-05T09:00:00Z
              kindling history /users/ada --data-dir ./kindling-data --ns app --limit 20
            """
    )

    @Argument(help: "Path inside the namespace.") var path = "/"
    @Option(help: "The window's start (TIME; default: the oldest kept).") var from: String?
    @Option(help: "The window's end (TIME; default: now).") var to: String?
    @Option(help: "The most writes to list (the most recent ones), 1 to \(PastRead.maxChangesListed).") var limit = 100
    @Flag(help: "Print the list as JSON.") var json = false
    @Option(name: .customLong("data-dir"), help: "Read this data directory directly (no server may be running on it).")
    var dataDirectory: String?
    @OptionGroup var remote: RemoteOptions

    func validate() throws {
        for (name, value) in [("--from", from), ("--to", to)] {
            if let value, HistoryTime.parse(value) == nil {
                throw ValidationError("\(name) must be milliseconds since 1970 or ISO 8601, such as 2026-12-05T09:30:00Z.")
            }
        }
        guard (1...PastRead.maxChangesListed).contains(limit) else {
            throw ValidationError("--limit must be from 1 to \(PastRead.maxChangesListed).")
        }
    }

    func run() async throws {
        let start = from.flatMap(HistoryTime.parse) ?? 0
        let end = to.flatMap(HistoryTime.parse) ?? Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let target = try remote.target()
        let changes: [JSONValue]
        if let dataDirectory {
            changes = try OfflineDataDirectory.changes(
                directory: dataDirectory, namespace: target.namespace, path: try parsePath(path), from: start, to: end, limit: limit,
                logger: quietLogger()
            ).map(\.jsonValue)
        } else {
            let body = try await restRequest("GET", target.restURL(path: path, "&changes=true&from=\(start)&to=\(end)&limit=\(limit)"))
            guard case .array(let items) = try JSONParser.parse(body) else {
                throw ValidationError("The server answered something other than a list")
            }
            changes = items
        }
        if json {
            printBody(Array(JSONWriter.string(.array(changes)).utf8))
            return
        }
        for change in changes {
            let time = change["time"]?.numberValue.flatMap { Int64(exactly: $0) }.map(HistoryTime.iso8601) ?? "?"
            let sequence = change["sequence"]?.numberValue.flatMap { Int64(exactly: $0) }.map { String($0) } ?? "?"
            let kind = change["kind"]?.stringValue ?? "?"
            let bytes = change["bytes"]?.numberValue.flatMap { Int64(exactly: $0) }.map { String($0) } ?? "?"
            let writer: String =
                switch change["writer"] {
                case nil: ""
                case .null?: "  by an unauthenticated client"
                case let who?: who["admin"] == .bool(true) ? "  by admin" : "  by \(who["uid"]?.stringValue ?? "?")"
                }
            print(
                "\(time)  #\(sequence)  \(kind.padding(toLength: 6, withPad: " ", startingAt: 0))  \(change["path"]?.stringValue ?? "?")  \(bytes) B\(writer)"
            )
        }
        if changes.isEmpty { printError("history: no writes to \(path) in that window") }
    }
}
