import ArgumentParser
import KindlingBench

/// `kindling-bench connections`.
struct ConnectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connections",
        abstract:
            "Open N idle connections from several 127.0.0.x addresses: the server's resident memory per connection, projected past this machine's limit."
    )

    @Option(help: "Connections to open (this harness needs one file descriptor each; the limit here is 20,000 per process).")
    var count = 10_000

    @Option(help: "Source addresses 127.0.0.2… to spread the connections over.")
    var sources = 4

    @Flag(help: "Each connection also listens on a path of its own.")
    var listen = false

    @OptionGroup var target: TargetOptions

    func validate() throws {
        try target.refuseComparison()
        guard count >= 1, (1...250).contains(sources) else { throw ValidationError("--count must be at least 1 and --sources 1…250.") }
    }

    func run() async throws {
        let options = ConnectionsOptions(count: count, sources: sources, listen: listen, progress: !target.noProgress)
        let report = try await target.withGroup { group in
            try await target.withKindlingNodes(fsync: "always") { nodes in
                try await ConnectionsScenario.run(kindling: nodes, group: group, options: options)
            }
        }
        try target.finish([report])
    }
}
