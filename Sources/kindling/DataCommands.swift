import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer
import NIOHTTP1

/// Exit codes of the client commands, stable for scripts: 0 success, 1 the server refused the
/// request, 2 the server could not be reached, 64 a bad argument (ArgumentParser's usage code).
enum ClientExit {
    static let refused = ExitCode(1)
    static let unreachable = ExitCode(2)
}

/// Sends one REST request for the client commands; prints a readable error and exits with a
/// stable code when it fails. Returns the body.
func restRequest(_ method: String, _ url: URL, body: JSONValue? = nil, credential: String? = adminCredential) async throws -> [UInt8] {
    try await restRequest(method, url, bytes: body.map { Data(JSONWriter.string($0).utf8) }, credential: credential)
}

/// The same with a body that is already encoded (an imported file, sent as it is). `credential`
/// is sent as a bearer token (nil sends none: a source database read without one).
func restRequest(_ method: String, _ url: URL, bytes body: Data?, credential: String? = adminCredential) async throws -> [UInt8] {
    let (status, data) = try await restResponse(method, url, bytes: body, credential: credential)
    return try accepted(status, data)
}

/// Sends one REST request and returns whatever status it got; a server that cannot be reached
/// is reported and ends the command.
func restResponse(_ method: String, _ url: URL, bytes body: Data?, credential: String?) async throws -> (status: Int, body: [UInt8]) {
    let request = ServerRequest(
        method: HTTPMethod(rawValue: method),
        url: url,
        headers: credential.map { [("Authorization", "Bearer \($0)")] } ?? [],
        body: body.map { [UInt8]($0) }
    )
    do {
        return try await request.send()
    } catch {
        printError("error: cannot reach \(url.host ?? "the server"):\(url.port.map(String.init) ?? ""): \(error)")
        throw ClientExit.unreachable
    }
}

/// The body of a 2xx answer; any other status is reported and ends the command as a refusal.
func accepted(_ status: Int, _ data: [UInt8]) throws -> [UInt8] {
    guard (200..<300).contains(status) else {
        let message = (try? JSONParser.parse(data))?["error"]?.stringValue ?? String(decoding: data, as: UTF8.self)
        printError("error: the server answered \(status): \(message)")
        throw ClientExit.refused
    }
    return data
}

/// The credential the client commands send: the admin secret in `KINDLING_ADMIN_SECRET`, else
/// the emulator's `owner` (accepted only by a server in emulator mode).
var adminCredential: String {
    let secret = ProcessInfo.processInfo.environment["KINDLING_ADMIN_SECRET"] ?? ""
    return secret.isEmpty ? "owner" : secret
}

/// Prints a response body as one line.
func printBody(_ bytes: [UInt8]) {
    FileHandle.standardOutput.write(Data(bytes))
    FileHandle.standardOutput.write(Data("\n".utf8))
}

/// `kindling get`: reads a path once.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the JSON at a path.",
        discussion: """
            Exit codes: 0 ok, 1 refused by the server, 2 server unreachable, 64 bad arguments.
            Examples:
              kindling get rooms/a --ns chat
              kindling get rooms/a --url "http://127.0.0.1:9000?ns=chat"
              KINDLING_URL=http://10.0.0.5:9000 kindling get / --export
            """
    )

    @Argument(help: "Path to read ('/' for the root).") var path: String
    @Flag(help: "Include priorities (export form).") var export = false
    @Option(help: "Read the data as it was at this instant (milliseconds since 1970 or ISO 8601; admin only).") var at: String?
    @OptionGroup var remote: RemoteOptions

    func validate() throws {
        if let at, HistoryTime.parse(at) == nil {
            throw ValidationError("--at must be milliseconds since 1970 or ISO 8601, such as 2026-12-05T09:30:00Z.")
        }
    }

    func run() async throws {
        let instant = at.flatMap(HistoryTime.parse).map { "&at=\($0)" } ?? ""
        printBody(try await restRequest("GET", try remote.target().restURL(path: path, (export ? "&format=export" : "") + instant)))
    }
}

/// `kindling set`: replaces the data at a path.
struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Replace the data at a path with a JSON value.",
        discussion: """
            Examples:
              kindling set rooms/a '{"name":"Ada"}'
              kindling set counters/visits 1 --ns site
              kindling set rooms/a/updated '{".sv":"timestamp"}'
            """
    )

    @Argument(help: "Path to write.") var path: String
    @Argument(help: "The JSON value (strings need their quotes).") var value: String
    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        let json = try parseJSONArgument(value)
        printBody(try await restRequest("PUT", try remote.target().restURL(path: path), body: json))
    }
}

/// `kindling update`: writes several children at once.
struct UpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Write each member of a JSON object below a path, atomically (multi-path update).",
        discussion: """
            Examples:
              kindling update rooms '{"a/name":"Ada","b":null}'
            """
    )

    @Argument(help: "Path the member names are relative to.") var path: String
    @Argument(help: "A JSON object of relative paths to values.") var value: String
    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        let json = try parseJSONArgument(value)
        guard case .object = json else { throw ValidationError("update needs a JSON object") }
        printBody(try await restRequest("PATCH", try remote.target().restURL(path: path), body: json))
    }
}

/// `kindling push`: adds a child under a new push id.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Add a value under a new, chronologically ordered push id and print the id.",
        discussion: """
            Examples:
              kindling push messages '{"text":"hi"}'
            """
    )

    @Argument(help: "Path of the list.") var path: String
    @Argument(help: "The JSON value.") var value: String
    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        let json = try parseJSONArgument(value)
        let body = try await restRequest("POST", try remote.target().restURL(path: path), body: json)
        if let name = (try? JSONParser.parse(body))?["name"]?.stringValue {
            print(name)
        } else {
            printBody(body)
        }
    }
}

/// `kindling remove`: deletes a path.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Delete the data at a path.",
        discussion: """
            Examples:
              kindling remove rooms/a
            """
    )

    @Argument(help: "Path to delete.") var path: String
    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        _ = try await restRequest("DELETE", try remote.target().restURL(path: path))
    }
}
