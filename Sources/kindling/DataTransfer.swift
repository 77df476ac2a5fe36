import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer
import Logging

/// Where `export` and `import` find the data: a running server, or a data directory.
struct DataLocation: ParsableArguments {
    @OptionGroup var remote: RemoteOptions

    @Option(help: "Path inside the namespace.")
    var path = "/"

    @Option(name: .customLong("data-dir"), help: "Work on this data directory directly (no server may be running on it).")
    var dataDirectory: String?
}

/// `kindling export`: the data at a path, as JSON with priorities, to standard output.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the data at a path as JSON (with priorities) to standard output.",
        discussion: """
            Examples:
              kindling export --ns chat > chat.json                     # from the server at KINDLING_URL
              kindling export --data-dir ./kindling-data --ns chat      # from a stopped server's files
            """
    )

    @OptionGroup var location: DataLocation

    func run() async throws {
        let bytes: [UInt8]
        let target = try location.remote.target()
        if let directory = location.dataDirectory {
            bytes = try OfflineDataDirectory.export(
                directory: directory, namespace: target.namespace, path: try parsePath(location.path), logger: quietLogger())
        } else {
            bytes = try await restRequest("GET", target.restURL(path: location.path, "&format=export"))
        }
        FileHandle.standardOutput.write(Data(bytes))
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}

/// `kindling import`: replace the data at a path with a JSON file.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the data at a path with the contents of a JSON file (export form or plain JSON).",
        discussion: """
            Examples:
              kindling import chat.json --ns chat                       # through the server at KINDLING_URL
              kindling import chat.json --data-dir ./kindling-data      # into a stopped server's files
            """
    )

    @Argument(help: "The JSON file to import ('-' for standard input).")
    var file: String

    @OptionGroup var location: DataLocation

    func run() async throws {
        let data: Data
        if file == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: file) else { throw ValidationError("Cannot read \(file)") }
            data = contents
        }
        let progress: (String) -> Void = { printError("import: \($0)") }
        progress("read \(data.count) bytes from \(file)")
        let target = try location.remote.target()
        if let directory = location.dataDirectory {
            try OfflineDataDirectory.importJSON(
                [UInt8](data),
                directory: directory,
                namespace: target.namespace,
                path: try parsePath(location.path),
                logger: quietLogger(),
                progress: progress
            )
        } else {
            progress("uploading to \(target.server) (namespace \(target.namespace), path \(location.path))")
            _ = try await restRequest("PUT", target.restURL(path: location.path, "&print=silent"), bytes: data)
            progress("done")
        }
    }
}

/// A logger that only reports errors, for the command-line tools.
func quietLogger() -> Logger {
    var logger = Logger(label: "kindling")
    logger.logLevel = .error
    return logger
}
