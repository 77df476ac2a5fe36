import ArgumentParser

/// `kindling-bench`: Kindling's load and performance harness.
@main
struct KindlingBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kindling-bench",
        abstract: "Measure Kindling: the core data tree, queries and fan-out over real sockets.",
        subcommands: [CoreBenchmark.self, QueryBenchmark.self, FanoutBenchmark.self, WritesBenchmark.self, StartupBenchmark.self]
    )
}
