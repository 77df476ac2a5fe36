import ArgumentParser
import KindlingBench
import NIOPosix

/// `kindling-bench fanout`.
struct FanoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "N subscribers on one path and one writer (paced or flat out): deliveries/s and write→delivery latency."
    )

    @Option(help: "Connections listening on the path.")
    var subscribers = 1000

    @Option(help: "Writes to send.")
    var writes = 2000

    @Option(help: "Writes per second (0: flat out, as fast as the window allows).")
    var rate = 0.0

    @Option(help: "Writes the writer may run ahead of the subscribers.")
    var window = 32

    @Option(help: "Bytes of padding in each value.")
    var padding = 16

    @OptionGroup var target: TargetOptions

    func validate() throws {
        guard subscribers >= 1, writes >= 1, window >= 1, padding >= 0, rate >= 0 else {
            throw ValidationError("--subscribers, --writes and --window must be at least 1; --padding and --rate not negative.")
        }
    }

    func run() async throws {
        let options = FanoutOptions(
            subscribers: subscribers, writes: writes, rate: rate, window: window, padding: padding, progress: !target.noProgress)
        try await target.withGroup { group in try await run(group: group, options: options) }
    }

    private func run(group: MultiThreadedEventLoopGroup, options: FanoutOptions) async throws {
        let ours = try await target.withKindlingNodes(fsync: "memory") { nodes in
            try await FanoutScenario.run(kindling: nodes, group: group, options: options)
        }
        guard target.comparingRedis else { return try target.finish([ours]) }
        let theirs = try await target.withRedis(fsync: "memory") { server in
            try await FanoutScenario.run(redis: server, group: group, options: options)
        }
        let comparisons = [
            Comparison.pair("deliveries/s", kindling: ours, redis: theirs, label: "fanout deliveries/s"),
            Comparison(name: "fanout p99 write→delivery (ms)", kindling: ours.latencies[0].p99, redis: theirs.latencies[0].p99),
        ].compactMap { $0 }
        try target.finish([ours, theirs], comparisons: comparisons)
    }
}
