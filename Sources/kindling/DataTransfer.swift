import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer
import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where `export` and `import` find the data: a running server, or a data directory.
struct DataLocation: ParsableArguments {
    @Option(help: "Namespace (database) to use.")
    var ns = "kindling"

    @Option(help: "Path inside the namespace.")
    var path = "/"

    @Option(help: "URL of a running server (also KINDLING_URL); used unless --data-dir is given.")
    var url: String?

    @Option(name: .customLong("data-dir"), help: "Work on this data directory directly (no server may be running on it).")
    var dataDirectory: String?

    var serverURL: String { url ?? ProcessInfo.processInfo.environment["KINDLING_URL"] ?? "http://127.0.0.1:9000" }

    func restURL(_ extra: String) throws -> URL {
        let parsed = try Path(path)
        var encoded = parsed.keys.map { $0.string.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? $0.string }.joined(separator: "/")
        if !encoded.isEmpty { encoded = "/" + encoded }
        let ns = self.ns.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? self.ns
        guard let url = URL(string: serverURL + encoded + "/.json?ns=" + ns + extra) else {
            throw ValidationError("Invalid --url \(serverURL)")
        }
        return url
    }
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
        if let directory = location.dataDirectory {
            bytes = try OfflineDataDirectory.export(directory: directory, namespace: location.ns, path: try Path(location.path), logger: quietLogger())
        } else {
            var request = URLRequest(url: try location.restURL("&format=export"))
            request.setValue("Bearer owner", forHTTPHeaderField: "Authorization")
            bytes = try await send(request)
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
        let progress: (String) -> Void = { FileHandle.standardError.write(Data("import: \($0)\n".utf8)) }
        progress("read \(data.count) bytes from \(file)")
        if let directory = location.dataDirectory {
            try OfflineDataDirectory.importJSON(
                [UInt8](data),
                directory: directory,
                namespace: location.ns,
                path: try Path(location.path),
                logger: quietLogger(),
                progress: progress
            )
        } else {
            var request = URLRequest(url: try location.restURL("&print=silent"))
            request.httpMethod = "PUT"
            request.setValue("Bearer owner", forHTTPHeaderField: "Authorization")
            request.httpBody = data
            progress("uploading to \(location.serverURL) (namespace \(location.ns), path \(location.path))")
            _ = try await send(request)
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

/// Sends a request and returns the body, turning HTTP errors into readable failures.
func send(_ request: URLRequest) async throws -> [UInt8] {
    let (data, response): (Data, URLResponse)
    do {
        (data, response) = try await URLSession.shared.data(for: request)
    } catch {
        throw ValidationError("Cannot reach \(request.url?.absoluteString ?? "the server"): \(error.localizedDescription)")
    }
    if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
        let message = (try? JSONParser.parse([UInt8](data)))?["error"]?.stringValue ?? String(decoding: data, as: UTF8.self)
        throw ValidationError("The server answered \(http.statusCode): \(message)")
    }
    return [UInt8](data)
}
