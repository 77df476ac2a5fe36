import ArgumentParser
import KindlingCore

/// `kindling-bench queries`: sorted indexes and listen fan-out in the core, no I/O.
struct QueryBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queries",
        abstract: "Index windows over a million children, index upkeep per write, and finding the listens a write affects."
    )

    @Option(help: "Children under the indexed location.")
    var children = 1_000_000

    @Option(help: "Listens at distinct paths for the fan-out lookup.")
    var listens = 100_000

    @Option(help: "Listeners on one path for the delivery measurement.")
    var subscribers = 10_000

    @Option(help: "Full scans to time against the index (each sorts every child).")
    var scans = 3

    @Option(help: "Repetitions of each measured operation.")
    var repeats = 20_000

    mutating func run() throws {
        try indexWindows()
        try fanoutLookup()
        try sharedDeliveries()
    }

    /// A database holding `children` children with random scores under /scores.
    private func scores(seed: UInt64) throws -> DatabaseState<Int> {
        var random = SeededGenerator(seed: seed)
        var state = DatabaseState<Int>()
        var members: [JSONMember] = []
        members.reserveCapacity(children)
        for child in 0..<children {
            members.append(JSONMember("p\(child)", .object([JSONMember("score", .number(Double(Int.random(in: 0..<1_000_000, using: &random))))])))
        }
        _ = state.commit(try state.tree.resolveSet(Path("scores"), .object(members), serverValues: ServerValues(timestamp: 0)))
        return state
    }

    private func indexWindows() throws {
        let location = try Path("scores")
        let index = Index.child(try Path("score"))
        var random = SeededGenerator(seed: 3)
        let paths = try (0..<repeats).map { _ in try Path("scores/p\(Int.random(in: 0..<children, using: &random))/score") }
        let values = (0..<1024).map { Node(.number(Double($0))) }

        // Each state is built on its own, so no write pays for copying pages shared with another.
        var plain = try scores(seed: 3)
        let plainWrites = ContinuousClock().measure {
            for (offset, path) in paths.enumerated() { _ = plain.commit(.set(path, values[offset & 1023])) }
        }
        plain = DatabaseState()

        var state = try scores(seed: 3)
        let indexBuild = ContinuousClock().measure { state.declareIndex(index, at: location) }
        print("built the score index over \(children) children in \(format(indexBuild))")
        let query = Query(index: index, limit: QueryLimit(count: 10, fromEnd: true))
        var sink = 0
        let windows = ContinuousClock().measure {
            for _ in 0..<repeats { sink &+= state.indexes.window(query, at: location, data: state.tree.node(at: location)).count }
        }
        report("limitToLast(10) by child over \(children) children, from the index", repeats, windows)
        if scans > 0 {
            let scan = ContinuousClock().measure {
                for _ in 0..<scans { sink &+= query.window(of: state.tree.node(at: location)).count }
            }
            report("the same window by a full scan and sort (no index)", scans, scan)
        }

        let indexedWrites = ContinuousClock().measure {
            for (offset, path) in paths.enumerated() { _ = state.commit(.set(path, values[offset & 1023])) }
        }
        report("commit of a score write, no index", repeats, plainWrites)
        report("commit of a score write, score index kept", repeats, indexedWrites)
        print("index upkeep per write: \(format((indexedWrites - plainWrites) / repeats)) (difference of the two)")
        if sink == 42 { print("") }
    }

    private func fanoutLookup() throws {
        var state = DatabaseState<Int>()
        for listen in 0..<listens {
            _ = state.listen(listen, at: try Path("rooms/r\(listen % 1000)/members/m\(listen)"))
        }
        var random = SeededGenerator(seed: 4)
        var empty = DatabaseState<Int>(root: state.tree.root)
        _ = empty.commit(.set(try Path("warm"), Node(.bool(true))))
        let writes = try (0..<repeats).map { _ -> Write in
            let listen = Int.random(in: 0..<listens, using: &random)
            return .set(try Path("rooms/r\(listen % 1000)/members/m\(listen)/online"), Node(.bool(Bool.random(using: &random))))
        }
        var delivered = 0
        let duration = ContinuousClock().measure {
            for write in writes { delivered += state.commit(write).count }
        }
        report("commit of a write among \(listens) listens at distinct paths (finds the 1 affected)", repeats, duration)
        let bare = ContinuousClock().measure {
            for write in writes { _ = empty.commit(write) }
        }
        report("the same writes with no listens at all", repeats, bare)
        if delivered == 0 { print("(no deliveries?)") }
    }

    private func sharedDeliveries() throws {
        var state = DatabaseState<Int>()
        let room = try Path("chat/room")
        for subscriber in 0..<subscribers { _ = state.listen(subscriber, at: room) }
        let writes = min(repeats, 2000)
        var recipients = 0
        let duration = try ContinuousClock().measure {
            for message in 0..<writes {
                let deliveries = state.commit(.set(try Path("chat/room/m\(message)"), Node(.string("hello \(message)"))))
                recipients += deliveries.reduce(0) { $0 + $1.recipients.count }
            }
        }
        report("commit of a message under \(subscribers) listeners (one shared delivery)", writes, duration)
        print("recipients per write: \(recipients / writes); per recipient: \(format(duration / (writes * subscribers)))")
    }

    private func report(_ name: String, _ count: Int, _ duration: Duration) {
        print("\(name): \(count) in \(format(duration)) = \(rate(count, duration)) ops/s, \(format(duration / count)) each")
    }
}
