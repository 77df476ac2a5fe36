import ArgumentParser

/// `kindling-bench`: Kindling's load and performance harness.
@main
struct KindlingBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kindling-bench",
        abstract: "Measure Kindling: the core data tree now, servers and clients as they arrive.",
        subcommands: [CoreBenchmark.self, QueryBenchmark.self]
    )
}
