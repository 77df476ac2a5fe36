import ArgumentParser

/// `kindling-bench`: Kindling's load and performance harness.
@main
struct KindlingBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kindling-bench",
        abstract: "Measure Kindling: the core data tree, queries, and realtime load over real sockets (optionally side by side with Redis).",
        subcommands: [
            FanoutCommand.self, WritesCommand.self, SeatsCommand.self, ChatCommand.self, ConnectionsCommand.self, SoakCommand.self,
            CoreBenchmark.self, QueryBenchmark.self, StartupBenchmark.self, RulesBenchmark.self, FloorCommand.self, HistoryBenchmark.self,
        ]
    )
}
