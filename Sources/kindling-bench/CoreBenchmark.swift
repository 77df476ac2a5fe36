import ArgumentParser
import Foundation
import KindlingCore

/// `kindling-bench core`: the data tree alone, no I/O.
struct CoreBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "core",
        abstract: "Small sets, snapshots and hashes on an in-memory tree of about a million nodes."
    )

    @Option(help: "Parents under /users.")
    var users = 10_000

    @Option(help: "Leaves under each parent (users × fields leaves in all).")
    var fields = 100

    @Option(help: "Writes per measurement.")
    var writes = 2_000_000

    @Option(help: "Distinct leaves written in the hot-set measurement.")
    var hotPaths = 10_000

    @Option(help: "Seed for the random paths.")
    var seed: UInt64 = 1

    mutating func run() throws {
        var tree = DataTree()
        let build = ContinuousClock().measure {
            for user in 0..<users {
                let children = (0..<fields).map { field in (Key(stringLiteral: "f\(field)"), Node(.number(Double(field)))) }
                tree.apply(.set(Path(keys: ["users", Key(stringLiteral: "u\(user)")]), Node(children: children)))
            }
        }
        let leaves = users * fields
        print("built \(leaves) leaves in \(format(build)) (\(rate(leaves, build)) leaves/s), resident \(residentMegabytes()) MB")

        var random = SeededGenerator(seed: seed)
        let paths = try (0..<min(writes, 1 << 20)).map { _ in
            try Path("users/u\(Int.random(in: 0..<users, using: &random))/f\(Int.random(in: 0..<fields, using: &random))")
        }
        let values = (0..<1024).map { Node(.number(Double($0))) }

        let applyOnly = ContinuousClock().measure {
            for index in 0..<writes {
                tree.apply(.set(paths[index % paths.count], values[index & 1023]))
            }
        }
        report("set (resolved write, applied in place), uniform over all leaves", writes, applyOnly)

        let hot = min(hotPaths, paths.count)
        let hotApply = ContinuousClock().measure {
            for index in 0..<writes {
                tree.apply(.set(paths[index % hot], values[index & 1023]))
            }
        }
        report("set (resolved write, applied in place), \(hot) hot leaves", writes, hotApply)

        // The peer: the same writes into nested Swift dictionaries (no order, no snapshots, no hashes).
        var dictionaries: [String: [String: Double]] = [:]
        for user in 0..<users {
            dictionaries["u\(user)"] = Dictionary(uniqueKeysWithValues: (0..<fields).map { ("f\($0)", Double($0)) })
        }
        let names = paths.map { ($0.keys[1].string, $0.keys[2].string) }
        let dictionaryWrites = ContinuousClock().measure {
            for index in 0..<writes {
                let (user, field) = names[index % names.count]
                dictionaries[user]![field] = Double(index & 1023)
            }
        }
        report("peer: the same sets into [String: [String: Double]]", writes, dictionaryWrites)
        print("ratio Kindling/peer (uniform sets): \((seconds(applyOnly) / seconds(dictionaryWrites) * 100).rounded() / 100)")

        let clock = ServerValues(timestamp: 1_795_000_000_000)
        let json = JSONValue.number(42)
        let resolveAndApply = try ContinuousClock().measure {
            for index in 0..<writes {
                tree.apply(try tree.resolveSet(paths[index % paths.count], json, serverValues: clock))
            }
        }
        report("set (validate + resolve + apply)", writes, resolveAndApply)

        let increment = JSONValue.object([JSONMember(".sv", .object([JSONMember("increment", .number(1))]))])
        let increments = try ContinuousClock().measure {
            for index in 0..<writes {
                tree.apply(try tree.resolveSet(paths[index % paths.count], increment, serverValues: clock))
            }
        }
        report("set of {\".sv\":{\"increment\":1}}", writes, increments)

        let snapshotWrites = writes / 10
        var snapshots: [Node] = []
        snapshots.reserveCapacity(1)
        let withSnapshots = ContinuousClock().measure {
            for index in 0..<snapshotWrites {
                snapshots = [tree.root]
                tree.apply(.set(paths[index % paths.count], values[index & 1023]))
            }
        }
        report("snapshot + set (every write copies its path)", snapshotWrites, withSnapshots)
        let snapshotTake = ContinuousClock().measure {
            for _ in 0..<writes { snapshots = [tree.root] }
        }
        report("take a snapshot alone", writes, snapshotTake)

        let hashWrites = writes / 10
        let userHash = ContinuousClock().measure {
            for index in 0..<hashWrites {
                let path = paths[index % paths.count]
                tree.apply(.set(path, values[index & 1023]))
                _ = tree.node(at: path.parent!).hash
            }
        }
        report("set + hash of its \(fields)-child parent (transaction check)", hashWrites, userHash)

        let rootHashes = max(writes / 10_000, 10)
        let rootHash = ContinuousClock().measure {
            for index in 0..<rootHashes {
                tree.apply(.set(paths[index % paths.count], values[index & 1023]))
                _ = tree.root.hash
            }
        }
        report("set + hash of the root (\(users) children)", rootHashes, rootHash)
        print("resident \(residentMegabytes()) MB")
    }

    private func report(_ name: String, _ count: Int, _ duration: Duration) {
        let perOp = duration / count
        print("\(name): \(count) in \(format(duration)) = \(rate(count, duration)) ops/s, \(format(perOp)) each")
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func format(_ duration: Duration) -> String {
    let value = seconds(duration)
    if value >= 1 { return "\((value * 100).rounded() / 100) s" }
    if value >= 1e-3 { return "\((value * 1e5).rounded() / 100) ms" }
    if value >= 1e-6 { return "\((value * 1e8).rounded() / 100) µs" }
    return "\((value * 1e9).rounded()) ns"
}

func rate(_ count: Int, _ duration: Duration) -> Int { Int(Double(count) / seconds(duration)) }

/// Resident memory of this process, from /proc (0 where there is none).
func residentMegabytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * 4096 / (1024 * 1024)
}
