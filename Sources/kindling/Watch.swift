import ArgumentParser
import Dispatch
import Foundation
import KindlingClient
import KindlingCore
import Synchronization

/// `kindling watch`: prints every event at a path as it happens, through the realtime SDK (so it
/// shows exactly what an app's observers would see, and reconnects like one).
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a line for every change at a path, live, until Ctrl-C.",
        discussion: """
            Each line: time, event type, path, value (truncated to --width). With --json, one JSON \
            object per line: {"time":…,"event":…,"path":…,"value":…,"previous":…}. \
            Losing the connection is reported on standard error; the watcher reconnects by itself.
            Examples:
              kindling watch rooms --ns chat
              kindling watch scores --order-by-child score --limit-to-last 3
              kindling watch / --json --event value | jq .
            """
    )

    @Argument(help: "Path to watch ('/' for the root).") var path: String

    @OptionGroup var remote: RemoteOptions

    @Flag(help: "One JSON object per line.") var json = false

    @Option(
        name: .customLong("event"),
        help: "Event types to show (repeatable): value, child_added, child_changed, child_removed, child_moved. Default: all child events.")
    var events: [String] = []

    @Option(name: .customLong("order-by-child"), help: "Order by this child path.") var orderByChild: String?
    @Flag(name: .customLong("order-by-key"), help: "Order by key.") var orderByKey = false
    @Flag(name: .customLong("order-by-value"), help: "Order by value.") var orderByValue = false
    @Option(name: .customLong("start-at"), help: "Lower bound (JSON).") var startAt: String?
    @Option(name: .customLong("end-at"), help: "Upper bound (JSON).") var endAt: String?
    @Option(name: .customLong("equal-to"), help: "Only this value (JSON).") var equalTo: String?
    @Option(name: .customLong("limit-to-first"), help: "Only the first N children.") var limitToFirst: Int?
    @Option(name: .customLong("limit-to-last"), help: "Only the last N children.") var limitToLast: Int?
    @Option(help: "Longest value text shown on a readable line.") var width = 120

    func eventTypes() throws -> [DataEventType] {
        if events.isEmpty { return [.childAdded, .childChanged, .childRemoved, .childMoved] }
        return try events.map { name in
            guard let type = DataEventType.allCases.first(where: { $0.name == name }) else {
                throw ValidationError("Unknown event type \(name)")
            }
            return type
        }
    }

    func buildQuery(_ database: Database) throws -> DatabaseQuery {
        // Everything here comes from the command line: checked, so a bad path or bound is a
        // usage error rather than a stop of the program.
        var query = try database.reference(validating: path).asQuery
        if let orderByChild {
            guard (try? Path(orderByChild)) != nil else { throw ValidationError("Invalid --order-by-child path \(orderByChild)") }
            query = query.queryOrdered(byChild: orderByChild)
        }
        if orderByKey { query = query.queryOrderedByKey() }
        if orderByValue { query = query.queryOrderedByValue() }
        if let startAt { query = query.queryStarting(atValue: try Self.bound(startAt, name: "--start-at value")) }
        if let endAt { query = query.queryEnding(atValue: try Self.bound(endAt, name: "--end-at value")) }
        if let equalTo { query = query.queryEqual(toValue: try Self.bound(equalTo, name: "--equal-to value")) }
        if let limitToFirst { query = query.queryLimited(toFirst: try Self.limit(limitToFirst, name: "--limit-to-first")) }
        if let limitToLast { query = query.queryLimited(toLast: try Self.limit(limitToLast, name: "--limit-to-last")) }
        return query
    }

    /// A range bound from the command line: a JSON leaf (a number, string, boolean or null).
    static func bound(_ text: String, name: String) throws -> JSONValue {
        let value = try parseJSONArgument(text, name: name)
        switch value {
        case .object, .array: throw ValidationError("The \(name) must be a number, a string, a boolean or null")
        default: return value
        }
    }

    /// A limit from the command line: a positive count.
    static func limit(_ count: Int, name: String) throws -> UInt {
        guard count > 0, let limit = UInt(exactly: count) else { throw ValidationError("\(name) must be a positive count") }
        return limit
    }

    func run() async throws {
        _ = try parsePath(path)
        let types = try eventTypes()
        let queue = DispatchQueue(label: "kindling.watch")
        let target = try remote.target()
        let database: Database
        do {
            database = try Database(url: target.databaseURL, callbackQueue: queue, trustedCertificatesPEM: try ServerRequest.trustedCertificatesPEM())
        } catch {
            throw ValidationError("Invalid --url \(target.server): \(error)")
        }
        // Watch as the admin when a secret is configured (emulator mode takes `owner`); a
        // refused credential leaves the watch anonymous, and the rules decide what it sees.
        try? await database.authenticate(with: adminCredential)
        let query = try buildQuery(database)
        let colour = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        let printer = EventPrinter(json: json, width: width, colour: colour)
        let state = ConnectionReporter(server: target.server)
        database.reference(".info/connected").observeEvents(.value, on: queue) { state.report($0.snapshot.jsonValue == .bool(true)) }
        for type in types {
            query.observeEvents(type, on: queue) { printer.print($0) }
        }
        // Runs until Ctrl-C (or SIGTERM), which closes the connection and exits with 130 / 143.
        let stops = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                database.shutdown()
                Foundation.exit(128 + number)
            }
            source.resume()
            return source
        }
        while !stops.isEmpty { try await Task.sleep(for: .seconds(3600)) }
    }
}

/// Formats events as lines.
struct EventPrinter: Sendable {
    var json: Bool
    var width: Int
    /// ANSI colours for the event type, only on a terminal (and never with NO_COLOR).
    var colour = false

    static func colourCode(_ type: DataEventType) -> String {
        switch type {
        case .childAdded: return "32"
        case .childChanged: return "33"
        case .childRemoved: return "31"
        case .childMoved: return "36"
        case .value: return "34"
        }
    }

    func print(_ event: DataEvent) {
        let snapshot = event.snapshot
        let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
        let line: String
        if json {
            var members = [
                JSONMember("time", .string(Date().ISO8601Format(.iso8601(timeZone: .gmt, includingFractionalSeconds: true)))),
                JSONMember("event", .string(event.type.name)),
                JSONMember("path", .string(snapshot.path.description)),
                JSONMember("value", snapshot.jsonValue),
            ]
            if let previous = event.previousSiblingKey { members.append(JSONMember("previous", .string(previous))) }
            line = JSONWriter.string(.object(members))
        } else {
            var text = JSONWriter.string(snapshot.jsonValue)
            if text.count > width { text = String(text.prefix(max(width - 1, 0))) + "…" }
            var name = event.type.name.padding(toLength: 13, withPad: " ", startingAt: 0)
            if colour { name = "\u{1B}[\(Self.colourCode(event.type))m\(name)\u{1B}[0m" }
            line = "\(time) \(name) \(snapshot.path) \(text)"
        }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// Tells the user on standard error when the connection comes and goes (only on changes).
final class ConnectionReporter: Sendable {
    let server: String
    private let last = Mutex<Bool?>(nil)

    init(server: String) { self.server = server }

    func report(_ connected: Bool) {
        let previous = last.withLock { value -> Bool?? in
            defer { value = connected }
            return .some(value)
        }
        guard previous != .some(connected) else { return }
        if connected {
            printError("watch: connected to \(server)")
        } else if previous != .some(nil) {
            printError("watch: connection lost; reconnecting…")
        } else {
            printError("watch: connecting to \(server)…")
        }
    }
}
