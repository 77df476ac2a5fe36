import ArgumentParser
import KindlingBench
import NIOCore
import NIOPosix

/// Where the scenario's server comes from, how the harness runs, and how it reports.
struct TargetOptions: ParsableArguments {
    @Option(help: "A running Kindling server (ws://host:port); by default the harness starts `kindling serve` itself.")
    var url: String?

    @Option(name: .customLong("server-pid"), help: "Process id of the --url server, to report its CPU and memory.")
    var serverPid: Int32?

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
        if compare != nil, redisExecutable == nil { throw ValidationError("--compare redis needs redis-server (apt-get install redis-server, or --redis-server PATH).") }
        if let url { _ = try BenchTarget(url: url) }
        if url != nil, rules != nil { throw ValidationError("--rules applies to the server the harness starts, not to --url.") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1.") }
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
    func withKindling<Result>(fsync: String, _ body: (BenchTarget) async throws -> Result) async throws -> Result {
        if let url { return try await body(try BenchTarget(url: url, pid: serverPid)) }
        let server = try await KindlingServerProcess.start(executable: kindling ?? KindlingServerProcess.defaultExecutable, fsync: fsync, rules: rules)
        return try await Self.run(body, on: server.target, then: server.stop)
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
