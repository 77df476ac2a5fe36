import ArgumentParser
import Foundation
import KindlingCore

/// `kindling rules coverage`: a namespace's rules coverage from a server recording it, as a
/// summary with the expressions to look at, the JSON report or the HTML page; below `--min` it
/// exits non-zero, for CI.
struct RulesCoverageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coverage",
        abstract: "Show which rule expressions requests evaluated (a server with rules coverage; admin or emulator mode).",
        discussion: """
            Prints how many of the rules' expressions and sub-expressions were evaluated, and the \
            ones never evaluated and the boolean ones that only ever returned true or only false, \
            at their line:column (from 1). The server records coverage in emulator mode, or with \
            kindling serve --rules-coverage.
              kindling rules coverage --ns app --min 90 --html coverage.html
            Exit codes: 0 ok, 1 refused by the server (coverage off, not an admin) or a file not \
            written, 2 server unreachable, 3 coverage below --min, 64 bad arguments.
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Option(help: "Exit 3 when fewer than this percent of the expressions were evaluated (0 to 100).")
    var min: Double?

    @Flag(help: "Print the JSON report (/.inspect/coverage.json) instead of the summary.")
    var json = false

    @Option(help: "Also save the HTML report (/.inspect/coverage) to this file (taken before the JSON report).")
    var html: String?

    @Flag(help: "Reset the coverage after reading it (the report shows what was cleared).")
    var reset = false

    static let belowMinimum = ExitCode(3)

    func validate() throws {
        if let min, !(0...100).contains(min) { throw ValidationError("--min must be a percentage from 0 to 100.") }
    }

    func run() async throws {
        let target = try remote.target()
        if let html {
            let page = try await restRequest("GET", try target.inspectURL("coverage"), bytes: nil)
            do {
                try Data(page).write(to: URL(fileURLWithPath: html))
            } catch {
                printError("error: cannot write \(html): \(error.localizedDescription)")
                throw ClientExit.refused
            }
        }
        let bytes = try await restRequest(reset ? "DELETE" : "GET", try target.inspectURL("coverage.json"), bytes: nil)
        let report: RulesCoverageListing
        do {
            report = try RulesCoverageListing(json: JSONParser.parse(bytes))
        } catch {
            printError("error: the server's coverage report is not one this command reads: \(error)")
            throw ClientExit.refused
        }
        if json {
            printBody(bytes)
        } else {
            print(report.text, terminator: "")
        }
        if let min, report.percent < min {
            printError("rules coverage \(RulesCoverageListing.number(report.percent))% is below --min \(RulesCoverageListing.number(min))%")
            throw Self.belowMinimum
        }
    }
}
