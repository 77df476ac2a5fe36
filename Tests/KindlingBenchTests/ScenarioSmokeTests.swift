import Foundation
import KindlingTesting
import NIOPosix
import Testing

@testable import KindlingBench

/// Every scenario at a small size, so none of them can rot. Figures are not checked here (they
/// belong in BENCHMARKS.md); only that each run completes and counts what it should.
@Suite("scenario smoke runs", .serialized)
struct ScenarioSmokeTests {
    private let group = MultiThreadedEventLoopGroup.singleton

    @Test("fanout delivers every write to every subscriber")
    func fanout() async throws {
        let options = FanoutOptions(subscribers: 20, writes: 30, rate: 0, window: 8, padding: 4, progress: false)
        let report = try await withInProcessServer { target in
            try await FanoutScenario.run(kindling: target, group: group, options: options)
        }
        #expect(report.value("deliveries") == 600)
        #expect(report.value("writes acknowledged") == 30)
        #expect(report.latencies.first?.count == 600)
    }

    @Test("paced fanout keeps to its rate limit and delivers everything")
    func pacedFanout() async throws {
        let options = FanoutOptions(subscribers: 5, writes: 10, rate: 200, window: 4, padding: 0, progress: false)
        let report = try await withInProcessServer { target in
            try await FanoutScenario.run(kindling: target, group: group, options: options)
        }
        #expect(report.value("deliveries") == 50)
    }

    @Test("writes are acknowledged and timed")
    func writes() async throws {
        let options = WritesOptions(writers: 4, pipeline: 4, duration: .milliseconds(200), fsync: "memory", progress: false)
        let report = try await withInProcessServer { target in
            try await WritesScenario.run(kindling: target, group: group, options: options)
        }
        let acknowledged = try #require(report.value("acknowledged writes"))
        #expect(acknowledged > 0)
        #expect(report.value("refused writes") == 0)
        #expect(report.latencies.first?.count == UInt64(acknowledged))
    }

    @Test("values of a given size are written and acknowledged")
    func writesOfSizedValues() async throws {
        let options = WritesOptions(writers: 4, pipeline: 4, duration: .milliseconds(200), fsync: "memory", progress: false, valueBytes: 100)
        var value: [UInt8] = []
        options.appendValue(sequence: 12, to: &value)
        #expect(value.count == 100)
        #expect(String(decoding: value, as: UTF8.self) == "\"12" + String(repeating: "x", count: 96) + "\"")
        var short: [UInt8] = []
        WritesOptions(writers: 1, pipeline: 1, duration: .seconds(1), fsync: "memory", progress: false, valueBytes: 3).appendValue(
            sequence: 12345, to: &short)
        #expect(String(decoding: short, as: UTF8.self) == "\"12345\"")
        let report = try await withInProcessServer { target in
            try await WritesScenario.run(kindling: target, group: group, options: options)
        }
        #expect(report.parameters["value bytes"] == "100")
        #expect(report.value("acknowledged writes") ?? 0 > 0)
        #expect(report.value("refused writes") == 0)
    }

    @Test("writers spread over namespaces are all acknowledged")
    func writesOverNamespaces() async throws {
        let options = WritesOptions(writers: 6, pipeline: 2, duration: .milliseconds(200), fsync: "memory", progress: false, namespaces: 3)
        let report = try await withInProcessServer { target in
            try await WritesScenario.run(kindling: target, group: group, options: options)
        }
        #expect(report.parameters["namespaces"] == "3")
        #expect(report.value("acknowledged writes") ?? 0 > 0)
        #expect(report.value("refused writes") == 0)
    }

    @Test("chat pairs answer each other until the deadline")
    func chat() async throws {
        let options = ChatOptions(pairs: 4, window: 2, textLength: 10, duration: .milliseconds(300), progress: false)
        let report = try await withInProcessServer { target in
            try await ChatScenario.run(kindling: target, group: group, options: options)
        }
        #expect(report.value("messages delivered") ?? 0 > 0)
        #expect(report.value("refused updates") == 0)
    }

    @Test("idle connections from several source addresses, each listening")
    func connections() async throws {
        let options = ConnectionsOptions(count: 40, sources: 3, listen: true, progress: false)
        let report = try await withInProcessServer { target in
            try await ConnectionsScenario.run(kindling: target, group: group, options: options)
        }
        #expect(report.value("connections open") == 40)
        #expect(report.value("refused listens") == 0)
    }

    @Test("the harness starts the real kindling binary and reads its CPU and memory", .enabled(if: kindlingBinaryBuilt))
    func spawnedServer() async throws {
        let server = try await KindlingServerProcess.start(executable: KindlingServerProcess.defaultExecutable, fsync: "always")
        let options = WritesOptions(writers: 2, pipeline: 2, duration: .milliseconds(200), fsync: "always", progress: false)
        let report = try await WritesScenario.run(kindling: server.target, group: group, options: options)
        await server.stop()
        #expect(report.value("acknowledged writes") ?? 0 > 0)
        #expect(report.serverResidentBytes ?? 0 > 0)
        #expect(report.serverCores != nil)
        #expect(report.harnessCores != nil)
    }

    @Test("redis fan-out and durable writes through the same machinery", .enabled(if: RedisServerProcess.findExecutable() != nil))
    func redis() async throws {
        let executable = try #require(RedisServerProcess.findExecutable())
        let server = try await RedisServerProcess.start(executable: executable, fsync: "always")
        let fanout = try await FanoutScenario.run(
            redis: server.target, group: group,
            options: FanoutOptions(subscribers: 10, writes: 20, rate: 0, window: 4, padding: 4, progress: false)
        )
        let writes = try await WritesScenario.run(
            redis: server.target, group: group,
            options: WritesOptions(writers: 2, pipeline: 2, duration: .milliseconds(200), fsync: "always", progress: false)
        )
        await server.stop()
        #expect(fanout.value("deliveries") == 200)
        #expect(writes.value("acknowledged writes") ?? 0 > 0)
        #expect(writes.value("refused writes") == 0)
    }

    /// Run as `kindling-bench soak` against a `kindling` it starts, each in a process of its own:
    /// the soak judges each interval by the clock, and inside this test process its clock and
    /// probes wait on a cooperative thread pool that the suite's CPU-bound tests can hold for
    /// seconds (a 1 s sleep of the soak's was seen to last 5 s there).
    @Test("soak: normal clients keep being served while hostile ones attack", .enabled(if: kindlingBinaryBuilt && benchBinaryBuilt))
    func soak() async throws {
        let (ending, output, errors) = try await ChildProcess.run(
            benchExecutable,
            arguments: [
                "soak", "--duration", "3", "--interval", "1", "--pairs", "2", "--write-every", "0.2", "--ping-flooders", "1",
                "--non-readers", "1", "--slowloris", "2", "--namespaces-per-second", "5", "--partial-bodies", "1", "--max-rss-mb", "1024",
                "--json", "--no-progress",
            ]
        )
        // Exit 2 is a failed check, whose report still comes: the expectations below say which.
        #expect(ending == .exited(0), "\(errors)")
        let bench = try JSONDecoder().decode(BenchOutput.self, from: Data(output.utf8))
        let report = try #require(bench.reports.first)
        #expect(report.passed, "\(report.checks)")
        #expect((report.latencies.first?.count ?? 0) > 0)
        #expect((report.value("hostile connections opened") ?? 0) >= 5)
        #expect(report.value("hostile bytes sent") ?? 0 > 0)
    }
}

/// True when `kindling` was built next to this test executable (it is, by `swift build --build-tests`).
let kindlingBinaryBuilt = FileManager.default.isExecutableFile(atPath: KindlingServerProcess.defaultExecutable)

/// `kindling-bench`, built beside `kindling`.
let benchExecutable = URL(fileURLWithPath: KindlingServerProcess.defaultExecutable).deletingLastPathComponent()
    .appendingPathComponent("kindling-bench").path

/// True when `kindling-bench` was built next to this test executable.
let benchBinaryBuilt = FileManager.default.isExecutableFile(atPath: benchExecutable)
