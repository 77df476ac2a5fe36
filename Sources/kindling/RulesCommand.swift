import ArgumentParser
import Foundation
import KindlingCore

/// `kindling rules`: tools for security rules documents.
struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Work with security rules documents.",
        subcommands: [RulesGet.self, RulesSet.self, RulesTest.self, RulesCoverageCommand.self]
    )
}

/// `kindling rules test FILE`: runs a rules unit-test file without a server.
struct RulesTest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Check a rules document against a file of allow/deny cases.",
        discussion: """
            The test file is JSON (comments allowed):
              {"rules": "database.rules.json",
               "cases": [{"name": "alice edits her profile", "auth": {"uid": "alice"},
                          "op": "set", "path": "/users/alice/name", "value": "Alice",
                          "data": {}, "expect": "allow"}]}
            "rules" is a rules file (relative to the test file) or an inline rules document. \
            "op" is read, set, update (value: the members) or remove; "query" holds REST query \
            parameters; "now" is the time in milliseconds. Failing cases print the rules that ran.
            Exit status: 0 when every case passes, 1 when one fails, 64 for a bad file.
            """
    )

    @Argument(help: "The test file.")
    var file: String

    @Flag(help: "Print the rules that ran for every case, not only for failing ones.")
    var explain = false

    func run() throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            printError("error: cannot read \(file)")
            throw ExitCode(64)
        }
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        let suite: RulesTestSuite
        do {
            suite = try RulesTestSuite.parse(String(decoding: data, as: UTF8.self)) { name in
                let url = name.hasPrefix("/") ? URL(fileURLWithPath: name) : directory.appendingPathComponent(name)
                return FileManager.default.contents(atPath: url.path).map { String(decoding: $0, as: UTF8.self) }
            }
        } catch {
            printError("error: \(file): \(error)")
            throw ExitCode(64)
        }
        let results = suite.run(explain: explain)
        for result in results {
            let expected = result.expectedAllowed ? "allow" : "deny"
            if result.passed {
                print("PASS \(result.name)")
            } else if let error = result.error {
                print("FAIL \(result.name): the operation is invalid: \(error)")
            } else {
                print("FAIL \(result.name): expected \(expected), got \(result.allowed ? "allow" : "deny")")
            }
            for line in result.trace { print("    \(line)") }
        }
        let passed = results.filter(\.passed).count
        print("\(passed)/\(results.count) cases passed")
        if passed != results.count { throw ExitCode(1) }
    }
}
