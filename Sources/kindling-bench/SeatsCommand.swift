import ArgumentParser
import KindlingBench
import NIOPosix

/// `kindling-bench seats`.
struct SeatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seats",
        abstract:
            "Study spots: K students check in/out of S locations by transactions on seat counters, observers watching; commits/s, datastale retries, and invariant checks."
    )

    @Option(help: "Students, one connection each.")
    var students = 1000

    @Option(help: "Study locations (student i uses location i mod locations).")
    var locations = 100

    @Option(help: "Seats at each location.")
    var seats = 8

    @Option(help: "Connections watching every location.")
    var observers = 2

    @Option(help: "Seconds students keep checking in and out.")
    var seconds = 5.0

    @Option(help: "Server fsync mode (always, everysec, never, memory).")
    var fsync = "always"

    @OptionGroup var target: TargetOptions

    func validate() throws {
        try target.refuseComparison()
        try target.refuseSeveralNodes()
        guard students >= 1, locations >= 1, seats >= 1, observers >= 0, seconds > 0 else {
            throw ValidationError("--students, --locations and --seats must be at least 1; --observers not negative; --seconds positive.")
        }
        try TargetOptions.validateFsync(fsync)
    }

    func run() async throws {
        let options = SeatsOptions(
            students: students, locations: locations, seats: seats, observers: observers,
            duration: .milliseconds(Int(seconds * 1000)), progress: !target.noProgress
        )
        let report = try await target.withGroup { group in
            try await target.withKindling(fsync: fsync) { server in
                try await SeatsScenario.run(kindling: server, group: group, options: options)
            }
        }
        var withMode = report
        withMode.parameters["fsync"] = fsync
        try target.finish([withMode])
    }
}
