import ArgumentParser
import Foundation
import KindlingCore

/// The server and namespace the client commands (`watch`, `get`, `set`, …) talk to.
struct RemoteOptions: ParsableArguments {
    @Option(help: "URL of the server (also KINDLING_URL; default http://127.0.0.1:9000).")
    var url: String?

    @Option(help: "Namespace (database) to use.")
    var ns = "kindling"

    var serverURL: String {
        let base = url ?? ProcessInfo.processInfo.environment["KINDLING_URL"] ?? "http://127.0.0.1:9000"
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// The REST address of `path` (`/<path>.json?ns=…` plus `extra` parameters).
    func restURL(path: String, _ extra: String = "") throws -> URL {
        let parsed = try parsePath(path)
        var encoded = parsed.keys.map {
            $0.string.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? $0.string
        }.joined(separator: "/")
        encoded = "/" + encoded  // the root's address is /.json
        let ns = self.ns.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? self.ns
        guard let url = URL(string: serverURL + encoded + ".json?ns=" + ns + extra) else {
            throw ValidationError("Invalid --url \(serverURL)")
        }
        return url
    }

    /// The URL for the realtime SDK: the server URL with `?ns=`.
    var databaseURL: String {
        let ns = self.ns.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? self.ns
        return serverURL + "?ns=" + ns
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
