import ArgumentParser
import Foundation
import KindlingCore

/// `kindling rules get`: prints a namespace's rules as they were given.
struct RulesGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the security rules in force for a namespace (admin; KINDLING_ADMIN_SECRET).",
        discussion: "Exit codes: 0 ok, 1 refused by the server, 2 server unreachable, 64 bad arguments."
    )

    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        FileHandle.standardOutput.write(Data(try await restRequest("GET", try remote.target().settingsURL("rules"), bytes: nil)))
    }
}

/// `kindling rules set FILE`: replaces a namespace's rules; the server checks them first and
/// keeps the old ones when they do not load.
struct RulesSet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Replace a namespace's security rules with a rules file (admin; KINDLING_ADMIN_SECRET).",
        discussion: """
            The file is checked locally first, then by the server; rules that do not load are \
            reported with their line and column, and the rules in force stay.
            Exit codes: 0 ok, 1 refused by the server, 2 server unreachable, 64 bad arguments or rules.
            """
    )

    @Argument(help: "The rules file (Firebase's JSON form; comments allowed).")
    var file: String

    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("Cannot read \(file).") }
        do throws(RulesError) {
            _ = try RulesDocument.parse(String(decoding: data, as: UTF8.self))
        } catch {
            throw ValidationError("\(file): \(error)")
        }
        _ = try await restRequest("PUT", try remote.target().settingsURL("rules"), bytes: data)
        print("rules set for namespace \(try remote.target().namespace)")
    }
}
