import ArgumentParser
import KindlingCore

/// `kindling`: the server and its tools.
@main
struct Kindling: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kindling",
        abstract: "A self-hosted realtime JSON database that speaks the Firebase Realtime Database protocols.",
        version: KindlingVersion.current,
        subcommands: [
            Serve.self, SnapshotCommand.self, Export.self, Import.self, Watch.self, GetCommand.self, SetCommand.self, UpdateCommand.self,
            PushCommand.self, RemoveCommand.self, RulesCommand.self, HealthCommand.self, HistoryCommand.self, RestoreCommand.self,
            ProfileCommand.self, MigrateCommand.self,
        ]
    )
}
