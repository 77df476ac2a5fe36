import ArgumentParser
import Foundation
import KindlingCore

/// The server and namespace the client commands (`watch`, `get`, `set`, …) talk to.
struct RemoteOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "URL of the server, as the SDKs take it: http://HOST:PORT, with ?ns=NAME or a database host name (also KINDLING_URL; default http://127.0.0.1:9000).",
            discussion: "http://127.0.0.1:9000?ns=demo and https://demo.example.com both name the namespace demo."
        ))
    var url: String?

    @Option(name: .customLong("ns"), help: "Namespace (database) to use, when the URL names none (default kindling).")
    var namespace: String?

    /// The server and namespace, checked before the command runs.
    func target() throws(ArgumentParser.ValidationError) -> RemoteTarget {
        let url = url ?? ProcessInfo.processInfo.environment["KINDLING_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:9000"
        return try RemoteTarget(url: url, namespace: namespace)
    }

    func validate() throws {
        _ = try target()
    }
}

/// A path from the command line, with a readable error.
func parsePath(_ text: String) throws -> Path {
    do {
        return try Path(text)
    } catch {
        throw ValidationError("Invalid path \(text): \(error)")
    }
}

/// JSON from the command line, with a readable error.
func parseJSONArgument(_ text: String, name: String = "value") throws -> JSONValue {
    do {
        return try JSONParser.parse(text)
    } catch {
        throw ValidationError("The \(name) is not valid JSON (\(error)). Quote strings: '\"text\"'.")
    }
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
