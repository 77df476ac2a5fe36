import Foundation
import KindlingCore
import KindlingTesting
import KindlingServer
import Logging
import Testing

/// The `kindling` executable end to end: `watch` against a server while `set` and `push` write.
@Suite(.timeLimit(.minutes(2)))
struct CommandLineTests {
    /// The `kindling` binary built next to the test bundle.
    static var executable: URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("kindling")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// Runs `kindling` to completion, with `environment` added to this process's; returns the
    /// exit status and standard output.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        guard let executable = Self.executable else { throw CLINotBuilt() }
        let run = try await ChildProcess.run(executable.path, arguments: arguments, environment: environment)
        switch run.ending {
        case .exited(let status): return (status, run.output)
        case .signalled(let signal): return (128 + signal, run.output)
        }
    }

    func run(_ arguments: [String]) async throws -> (status: Int32, output: String) { try await Self.run(arguments) }

    @Test func watchPrintsWritesMadeWithSetAndPush() async throws {
        guard Self.executable != nil else {
            Issue.record("kindling executable not found next to \(CommandLine.arguments[0])")
            return
        }
        var logger = Logger(label: "kindling-cli-test")
        logger.logLevel = .critical
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, logger: logger))
        let url = "http://127.0.0.1:\(server.port)"

        let watch = try await ChildProcess.start(try #require(Self.executable).path, arguments: ["watch", "rooms", "--url", url, "--ns", "cli"])
        #expect(try await watch.waitFor(inErrors: true, timeout: .seconds(10)) { $0.contains("watch: connected") })

        let set = try await run(["set", "rooms/a", #"{"n":1}"#, "--url", url, "--ns", "cli"])
        #expect(set.status == 0)
        let push = try await run(["push", "rooms", #""hello""#, "--url", url, "--ns", "cli"])
        #expect(push.status == 0)
        let id = push.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 20)
        #expect(try await watch.waitFor(timeout: .seconds(10)) { $0.contains("child_added   /rooms/\(id) \"hello\"") })
        #expect(watch.output.contains(#"child_added   /rooms/a {"n":1}"#))

        let get = try await run(["get", "rooms/a", "--url", url, "--ns", "cli"])
        #expect(get.status == 0 && get.output == "{\"n\":1}\n")
        #expect(try await run(["set", "rooms/a", "not json", "--url", url, "--ns", "cli"]).status == 64)
        // The root is addressed as /.json; export goes through the same REST client.
        let root = try await run(["get", "/", "--url", url, "--ns", "cli"])
        #expect(root.status == 0 && root.output.hasPrefix("{\"rooms\":"))
        let export = try await run(["export", "--url", url, "--ns", "cli", "--path", "rooms/a"])
        #expect(export.status == 0 && export.output == "{\"n\":1}\n")

        watch.signal(SIGINT)
        #expect(try await watch.wait() == .exited(130))
        try await server.shutdown()
        // Nothing answers: exit 2 (a port nothing listens on, not the server's own, which a
        // parallel test's server may have been given by now).
        let nobody = try #require(RefusingPort())
        let unreachable = try await run(["get", "rooms", "--url", "http://127.0.0.1:\(nobody.port)", "--ns", "cli"])
        #expect(unreachable.status == 2, "\(unreachable.output)")
    }

    /// The URL the README gives the SDKs works for the client commands: `?ns=` names the
    /// namespace (it used to become part of the path and the server answered 404).
    @Test func theSDKsDatabaseURLNamesTheNamespace() async throws {
        guard Self.executable != nil else {
            Issue.record("kindling executable not found next to \(CommandLine.arguments[0])")
            return
        }
        var logger = Logger(label: "kindling-cli-test")
        logger.logLevel = .critical
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, logger: logger))
        let base = "http://127.0.0.1:\(server.port)"
        let set = try await run(["set", "/a", "1", "--url", base + "?ns=demo"])
        #expect(set.status == 0 && set.output == "1\n")
        #expect(try await run(["get", "a", "--url", base, "--ns", "demo"]).output == "1\n")
        #expect(try await run(["get", "a", "--url", base]).output == "null\n")
        #expect(try await run(["update", "/", #"{"b/c":2}"#, "--url", base + "/?ns=demo"]).status == 0)
        #expect(try await run(["get", "/", "--url", base + "?ns=demo", "--ns", "demo"]).output == #"{"a":1,"b":{"c":2}}"# + "\n")
        // The URL and --ns disagree: a usage error, and nothing is sent.
        #expect(try await run(["set", "a", "2", "--url", base + "?ns=demo", "--ns", "other"]).status == 64)
        #expect(try await run(["get", "a", "--url", base, "--ns", "demo"]).output == "1\n")
        try await server.shutdown()
    }

    /// `kindling --version` prints the release the binary is, the one the SDK and the server's
    /// metrics name too (`Database.sdkVersion()` is checked where an app calls it:
    /// scripts/check-sdk-by-version.sh runs one that depends on the release's tag).
    @Test func versionPrintsTheRelease() async throws {
        guard Self.executable != nil else {
            Issue.record("kindling executable not found next to \(CommandLine.arguments[0])")
            return
        }
        let version = try await run(["--version"])
        #expect(version.status == 0)
        #expect(version.output == KindlingVersion.current + "\n")
        // MAJOR.MINOR.PATCH, each a number: what SwiftPM reads in a tag an app depends on.
        let parts = KindlingVersion.current.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && Int($0) != nil }, "\(parts)")
    }

    /// `kindling health` is a container's HEALTHCHECK: any failure exits 1, never 2 (which
    /// Docker reserves), including a server that cannot be reached.
    @Test func healthExitsOneWhenTheServerIsUnreachable() async throws {
        guard Self.executable != nil else {
            Issue.record("kindling executable not found next to \(CommandLine.arguments[0])")
            return
        }
        var logger = Logger(label: "kindling-cli-test")
        logger.logLevel = .critical
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, logger: logger))
        let url = "http://127.0.0.1:\(server.port)"
        try await server.shutdown()
        #expect(try await run(["health", "--url", url, "--timeout", "2"]).status == 1)
        #expect(try await run(["health", "--ready", "--url", url, "--timeout", "2"]).status == 1)
        #expect(try await run(["health", "--url", url, "--timeout", "0"]).status == 64)
    }
}

struct CLINotBuilt: Error {}
