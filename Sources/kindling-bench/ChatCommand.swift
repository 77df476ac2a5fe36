import ArgumentParser
import KindlingBench

/// `kindling-bench chat`.
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract:
            "Dive-buddy chat: pairs of users send messages (one update writing the message and both users' user-messages index) and answer each other through child listeners."
    )

    @Option(help: "Conversations, two users (connections) each.")
    var pairs = 500

    @Option(help: "Messages each user keeps in flight.")
    var window = 1

    @Option(help: "Characters of text per message.")
    var text = 40

    @Option(help: "Seconds users keep answering.")
    var seconds = 5.0

    @Option(help: "Server fsync mode (always, everysec, never, memory).")
    var fsync = "always"

    @OptionGroup var target: TargetOptions

    func validate() throws {
        try target.refuseComparison()
        try target.refuseSeveralNodes()
        guard pairs >= 1, window >= 1, text >= 0, seconds > 0 else {
            throw ValidationError("--pairs and --window must be at least 1; --seconds positive.")
        }
        try TargetOptions.validateFsync(fsync)
    }

    func run() async throws {
        let options = ChatOptions(
            pairs: pairs, window: window, textLength: text, duration: .milliseconds(Int(seconds * 1000)), progress: !target.noProgress)
        var report = try await target.withGroup { group in
            try await target.withKindling(fsync: fsync) { server in
                try await ChatScenario.run(kindling: server, group: group, options: options)
            }
        }
        report.parameters["fsync"] = fsync
        try target.finish([report])
    }
}
