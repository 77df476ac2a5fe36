import ArgumentParser
import Foundation
import KindlingBench
import NIOCore
import NIOPosix

/// Where the scenario's server comes from, how the harness runs, and how it reports.
struct TargetOptions: ParsableArguments {
    @Option(
        help: """
            A running Kindling server (ws://host:port); by default the harness starts `kindling serve` itself. \
            Repeat it, or give a comma-separated list, for the nodes of a cluster (fanout, connections and writes \
            spread their connections over them round-robin; the first node gets the writer).
            """
    )
    var url: [String] = []

    @Option(
        name: .customLong("server-pid"),
        help:
            "Process id of the --url server, to report its CPU and memory; with several nodes one per node, in the order of --url (repeated or comma-separated; the figures are sums)."
    )
    var serverPid: [String] = []

    @Option(help: "The kindling executable to start (default: the one next to kindling-bench).")
    var kindling: String?

    @Option(help: "A security rules file for the server the harness starts (to measure with rules on).")
    var rules: String?

    @Option(help: "Also run the same load against a redis-server the harness starts (the only peer: redis).")
    var compare: String?

    @Option(name: .customLong("redis-server"), help: "The redis-server executable (default: found in /usr/bin).")
    var redisServer: String?

    @Option(help: "Event-loop threads of the harness (default: one per core).")
    var threads: Int = System.coreCount

    @Flag(help: "Print the results as JSON on standard output.")
    var json = false

    @Flag(name: .customLong("no-progress"), help: "No progress line on standard error.")
    var noProgress = false

    func validate() throws {
        if let compare, compare != "redis" { throw ValidationError("--compare knows only redis.") }
        if compare != nil, redisExecutable == nil {
            throw ValidationError("--compare redis needs redis-server (apt-get install redis-server, or --redis-server PATH).")
        }
        for url in urls { _ = try BenchTarget(url: url) }
        let pids = Self.list(serverPid)
        guard pids.allSatisfy({ Int32($0).map { $0 > 0 } ?? false }) else {
            throw ValidationError("--server-pid takes process ids, not \(pids.joined(separator: ",")).")
        }
        if !pids.isEmpty, pids.count != urls.count {
            throw ValidationError("Give one --server-pid per --url node, in the same order (\(urls.count) nodes, \(pids.count) pids).")
        }
        if !urls.isEmpty, rules != nil { throw ValidationError("--rules applies to the server the harness starts, not to --url.") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1.") }
    }

    /// Every `--url`, with comma-separated lists split; empty when the harness starts the server.
    var urls: [String] { Self.list(url) }

    /// Every `--server-pid` (checked by `validate`), with comma-separated lists split.
    var serverPids: [Int32] { Self.list(serverPid).compactMap { Int32($0) } }

    /// The values of a repeatable option, each of which may be a comma-separated list.
    private static func list(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }.map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Refuses several `--url` nodes for the scenarios that drive one server.
    func refuseSeveralNodes() throws {
        if urls.count > 1 { throw ValidationError("Several --url nodes apply to fanout, connections and writes only.") }
    }

    var redisExecutable: String? { redisServer ?? RedisServerProcess.findExecutable() }

    var comparingRedis: Bool { compare == "redis" }

    /// Refuses `--compare` for the scenarios that have no Redis peer.
    func refuseComparison() throws {
        if comparingRedis { throw ValidationError("--compare redis applies to fanout and writes only.") }
    }

    /// Refuses an fsync mode the spawned server does not have (`memory`: no storage).
    static func validateFsync(_ mode: String) throws {
        guard ["always", "everysec", "never", "memory"].contains(mode) else {
            throw ValidationError("Unknown fsync mode \(mode): use always, everysec, never or memory.")
        }
    }

    /// Runs `body` against the --url server, or against a fresh `kindling serve` with `fsync`.
    /// The commands calling this refuse several nodes (`refuseSeveralNodes`).
    func withKindling<Result>(fsync: String, _ body: (BenchTarget) async throws -> Result) async throws -> Result {
        try await withKindlingNodes(fsync: fsync) { targets in try await body(targets[0]) }
    }

    /// Runs `body` against every --url node (at least one), or against a fresh `kindling serve`
    /// with `fsync` as the only node.
    func withKindlingNodes<Result>(fsync: String, _ body: ([BenchTarget]) async throws -> Result) async throws -> Result {
        let urls = urls
        if !urls.isEmpty {
            let pids = serverPids
            let targets = try urls.indices.map { index in try BenchTarget(url: urls[index], pid: pids.count == urls.count ? pids[index] : nil) }
            return try await body(targets)
        }
        let server = try await KindlingServerProcess.start(
            executable: kindling ?? KindlingServerProcess.defaultExecutable, fsync: fsync, rules: rules)
        return try await Self.run({ target in try await body([target]) }, on: server.target, then: server.stop)
    }

    /// Runs `body` against a fresh redis-server with the append-only policy matching `fsync`.
    func withRedis<Result>(fsync: String, _ body: (BenchTarget) async throws -> Result) async throws -> Result {
        guard let executable = redisExecutable else { throw ValidationError("redis-server not found") }
        let server = try await RedisServerProcess.start(executable: executable, fsync: fsync)
        return try await Self.run(body, on: server.target, then: server.stop)
    }

    /// Runs `body` against a server this command started, then stops it whether `body` threw or not.
    private static func run<Result>(
        _ body: (BenchTarget) async throws -> Result, on target: BenchTarget, then stop: () async -> Void
    ) async throws -> Result {
        do {
            let result = try await body(target)
            await stop()
            return result
        } catch {
            await stop()
            throw error
        }
    }

    /// Runs `body` with the harness's event loops, shut down afterwards.
    func withGroup<Result>(_ body: (MultiThreadedEventLoopGroup) async throws -> Result) async throws -> Result {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        do {
            let result = try await body(group)
            try await group.shutdownGracefully()
            return result
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Prints the reports as a table (or JSON) and fails the command when a check failed.
    func finish(_ reports: [ScenarioReport], comparisons: [Comparison] = []) throws {
        if json {
            print(try BenchOutput(reports: reports, comparisons: comparisons).jsonText())
        } else {
            print(ReportTable.render(reports, comparisons: comparisons))
        }
        if reports.contains(where: { !$0.passed }) { throw ExitCode(2) }
    }
}
