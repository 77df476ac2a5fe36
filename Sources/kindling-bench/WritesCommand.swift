import ArgumentParser
import KindlingBench
import KindlingProtocol
import NIOPosix

/// `kindling-bench writes`.
struct WritesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writes",
        abstract: "M writers on distinct paths keeping their pipelines full: acknowledged (durable) writes/s and ack latency per fsync mode."
    )

    @Option(help: "Connections writing, each to its own path.")
    var writers = 64

    @Option(help: "Writes each writer keeps in flight.")
    var pipeline = 16

    @Option(help: "Seconds to measure each fsync mode.")
    var seconds = 5.0

    @Option(
        help:
            "Server fsync modes to measure, comma-separated: always, everysec, never, memory (no storage); with --url the one the server runs, or cluster for `kindling serve --cluster` nodes."
    )
    var fsync = "always,everysec"

    @Option(help: "Namespaces the writers are spread over (writer i in namespace i mod N); Redis's writers are unchanged.")
    var namespaces = 1

    @Option(help: "Bytes of each value: 0 writes a number; more writes a JSON string that long, quotes included (the same bytes to Redis).")
    var valueBytes = 0

    @Option(help: "The namespace to write in (one namespace only), so a profiler or watcher can attach to it first; default: a fresh one per run.")
    var namespace: String?

    @OptionGroup var target: TargetOptions

    var modes: [String] { fsync.split(separator: ",").map(String.init) }

    func validate() throws {
        guard writers >= 1, pipeline >= 1, seconds > 0 else {
            throw ValidationError("--writers and --pipeline must be at least 1, --seconds positive.")
        }
        guard (0...1_000_000).contains(valueBytes) else { throw ValidationError("--value-bytes must be 0…1000000.") }
        guard (1...writers).contains(namespaces) else { throw ValidationError("--namespaces must be 1…writers.") }
        if let namespace {
            guard NamespaceName.isValid(namespace) else { throw ValidationError("--namespace: \(NamespaceName.rule)") }
            guard namespaces == 1 else { throw ValidationError("--namespace names the one namespace: leave --namespaces at 1.") }
        }
        // A cluster node's log is the replicated stream: with --url the mode only names it in the report.
        for mode in modes where !(mode == "cluster" && !target.urls.isEmpty) { try TargetOptions.validateFsync(mode) }
        if modes.contains("cluster"), target.comparingRedis { throw ValidationError("--compare redis has no peer for --fsync cluster.") }
        if !target.urls.isEmpty, modes.count > 1 {
            throw ValidationError("With --url the server's own fsync mode applies: give one --fsync, naming it.")
        }
    }

    func run() async throws {
        try await target.withGroup { group in try await run(group: group) }
    }

    private func run(group: MultiThreadedEventLoopGroup) async throws {
        var reports: [ScenarioReport] = []
        var comparisons: [Comparison] = []
        for mode in modes {
            let options = WritesOptions(
                writers: writers, pipeline: pipeline, duration: .milliseconds(Int(seconds * 1000)), fsync: mode, progress: !target.noProgress,
                namespaces: namespaces, valueBytes: valueBytes, namespace: namespace)
            let ours = try await target.withKindlingNodes(fsync: mode) { nodes in
                try await WritesScenario.run(kindling: nodes, group: group, options: options)
            }
            reports.append(ours)
            guard target.comparingRedis else { continue }
            let theirs = try await target.withRedis(fsync: mode) { server in
                try await WritesScenario.run(redis: server, group: group, options: options)
            }
            reports.append(theirs)
            comparisons += [
                Comparison.pair("acknowledged writes/s", kindling: ours, redis: theirs, label: "writes/s, fsync \(mode)"),
                Comparison(name: "p99 ack (ms), fsync \(mode)", kindling: ours.latencies[0].p99, redis: theirs.latencies[0].p99),
            ].compactMap { $0 }
        }
        try target.finish(reports, comparisons: comparisons)
    }
}
