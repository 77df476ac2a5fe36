import ArgumentParser
import KindlingBench

/// `kindling-bench soak`.
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract:
            "Normal realtime clients alongside hostile ones (ping floods, non-readers, slowloris, namespace floods, partial bodies): the normal clients' p99 over time and the server's peak memory.",
        discussion: "Exits non-zero when an interval serves the normal clients nothing or the server's memory exceeds --max-rss-mb. Loopback only."
    )

    @Option(help: "Seconds to run.")
    var duration = 600.0

    @Option(help: "Seconds between readings.")
    var interval = 30.0

    @Option(help: "Normal listener/writer pairs.")
    var pairs = 8

    @Option(name: .customLong("write-every"), help: "Seconds between one normal writer's writes.")
    var writeEvery = 0.1

    @Option(name: .customLong("ping-flooders"), help: "WebSocket connections sending pings and never reading.")
    var pingFlooders = 2

    @Option(name: .customLong("non-readers"), help: "Connections pipelining REST GETs and never reading.")
    var nonReaders = 2

    @Option(help: "Connections sending headers a byte a second.")
    var slowloris = 50

    @Option(name: .customLong("namespaces-per-second"), help: "Reads of fresh namespace names per second.")
    var namespacesPerSecond = 5

    @Option(name: .customLong("partial-bodies"), help: "Connections sending part of a 64 MB body and then nothing.")
    var partialBodies = 4

    @Option(name: .customLong("max-rss-mb"), help: "The server's resident memory may not exceed this.")
    var maxResidentMegabytes = 1024

    @OptionGroup var target: TargetOptions

    func validate() throws {
        try target.refuseComparison()
        try target.refuseSeveralNodes()
        guard duration >= 1, duration <= 86_400, interval >= 1, interval <= duration else {
            throw ValidationError("--duration must be 1…86400 seconds and --interval 1 s up to the duration.")
        }
        guard writeEvery >= 0.001, writeEvery <= 60 else { throw ValidationError("--write-every must be 0.001…60 seconds.") }
        for (name, value) in [
            ("--pairs", pairs), ("--ping-flooders", pingFlooders), ("--non-readers", nonReaders), ("--slowloris", slowloris),
            ("--partial-bodies", partialBodies),
        ] {
            guard (0...1000).contains(value) else { throw ValidationError("\(name) must be 0…1000.") }
        }
        guard pairs >= 1 else { throw ValidationError("--pairs must be at least 1.") }
        guard (0...1000).contains(namespacesPerSecond) else { throw ValidationError("--namespaces-per-second must be 0…1000.") }
        guard maxResidentMegabytes >= 1 else { throw ValidationError("--max-rss-mb must be at least 1.") }
        for url in target.urls {
            let host = try BenchTarget(url: url).host
            guard host == "localhost" || host.hasPrefix("127.") || host == "[::1]" else {
                throw ValidationError("soak attacks its server: loopback only.")
            }
        }
    }

    func run() async throws {
        let options = SoakOptions(
            duration: .milliseconds(Int64(duration * 1000)), interval: .milliseconds(Int64(interval * 1000)), pairs: pairs,
            writeEvery: .microseconds(Int64(writeEvery * 1_000_000)),
            pingFlooders: pingFlooders, nonReaders: nonReaders, slowloris: slowloris, namespacesPerSecond: namespacesPerSecond,
            partialBodies: partialBodies, maxResidentMegabytes: maxResidentMegabytes, progress: !target.noProgress
        )
        let report = try await target.withGroup { group in
            try await target.withKindling(fsync: "memory") { server in
                try await SoakScenario.run(kindling: server, group: group, options: options)
            }
        }
        try target.finish([report])
    }
}
