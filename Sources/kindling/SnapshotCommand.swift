import ArgumentParser
import Foundation
import KindlingServer

/// `kindling snapshot`: asks the server running on a data directory to snapshot now.
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Ask the server running on a data directory to write snapshots now (it cuts its logs after).",
        discussion: """
            Sends SIGUSR1 to the server that holds the data directory. Every namespace with writes \
            its newest snapshot lacks writes a new one in the background; the server logs each \
            snapshot as it lands. Snapshots are also written on their own by log size and age.
            Example:
              kindling snapshot --data-dir ./kindling-data
            """
    )

    @Option(name: .customLong("data-dir"), help: "The data directory of the running server.")
    var dataDirectory = "./kindling-data"

    func run() throws {
        let pid: Int32?
        do {
            pid = try KindlingServer.runningServer(dataDirectory: dataDirectory)
        } catch {
            printError("error: \(error)")
            throw ClientExit.refused
        }
        guard let pid else {
            printError("error: no Kindling server is running on \(dataDirectory)")
            throw ClientExit.unreachable
        }
        guard kill(pid, SIGUSR1) == 0 else {
            printError("error: cannot signal the server (process \(pid)): \(String(cString: strerror(errno)))")
            throw ClientExit.refused
        }
        print("asked the server (process \(pid)) to snapshot \(dataDirectory); its log reports each snapshot written")
    }
}
