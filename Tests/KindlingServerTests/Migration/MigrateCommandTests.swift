import Foundation
import KindlingTesting
import Testing

/// `kindling migrate` run as a process between two `kindling serve` processes, the first
/// standing in for hosted Firebase.
@Suite(.serialized) struct MigrateCommandTests {
    /// Two servers on fresh data directories, ended and removed after `body`.
    static func withServers(sourceArguments: [String] = [], _ body: (ServerProcess, ServerProcess) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "kindling-migrate-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = try await ServerProcess.start(dataDirectory: directory + "/source", arguments: sourceArguments)
        let target = try await ServerProcess.start(dataDirectory: directory + "/target")
        do {
            try await body(source, target)
        } catch {
            await source.kill()
            await target.kill()
            throw error
        }
        await source.kill()
        await target.kill()
    }

    static func migrate(_ source: ServerProcess, _ target: ServerProcess, _ extra: [String]) async throws -> ChildProcess {
        try await ChildProcess.start(
            ServerProcess.binary,
            arguments: ["migrate", "--from", "http://127.0.0.1:\(source.port)?ns=app", "--url", "http://127.0.0.1:\(target.port)", "--ns", "app"]
                + extra)
    }

    static func read(_ server: ServerProcess, _ path: String) async throws -> String {
        try await TestHTTPConnection.request(port: server.port, "GET", "/\(path).json?ns=app").text
    }

    @Test func aMigrationUnderLiveWritesEndsWithEqualHashes() async throws {
        try await Self.withServers { source, target in
            let seed = (0..<300).map { #""u\#($0)":{"name":"user \#($0)","n":\#($0)}"# }.joined(separator: ",")
            #expect(try await TestHTTPConnection.request(port: source.port, "PUT", "/users.json?ns=app", body: "{\(seed)}").status == 200)
            #expect(try await TestHTTPConnection.request(port: source.port, "PUT", "/rooms/r/title.json?ns=app", body: #""old""#).status == 200)
            // Something the target holds before is replaced by the copy.
            #expect(try await TestHTTPConnection.request(port: target.port, "PUT", "/stale.json?ns=app", body: "1").status == 200)
            // Idle for 15 s: the cut-over must come after the writer's last write, and a loaded
            // machine can hold the writer up for seconds between two writes (8 s once, beside
            // the full suite and two busy loops).
            let migration = try await Self.migrate(source, target, ["--until-idle", "15", "--chunk-kb", "1"])
            // The writer runs through the walk and the copy, and goes on after them.
            let writer = Task {
                var index = 0
                var afterCopy = 0
                while afterCopy < 40 {
                    let put = try await TestHTTPConnection.request(port: source.port, "PUT", "/live/k\(index).json?ns=app", body: "\(index)")
                    #expect(put.status == 200)
                    let patch = try await TestHTTPConnection.request(
                        port: source.port, "PATCH", "/users/u\(index % 300).json?ns=app", body: #"{"n":-\#(index)}"#)
                    #expect(patch.status == 200)
                    if index % 10 == 0 {
                        _ = try await TestHTTPConnection.request(port: source.port, "DELETE", "/live/k\(index / 2).json?ns=app")
                    }
                    index += 1
                    if migration.errorOutput.contains("migrate: copied") { afterCopy += 1 }
                    if !migration.isRunning {
                        Issue.record("the migration cut over while the writer was still writing: \(migration.errorOutput)")
                        break
                    }
                }
                _ = try await TestHTTPConnection.request(port: source.port, "PUT", "/rooms/r/title.json?ns=app", body: #""new""#)
            }
            try await writer.value
            // A keep-alive (every 10 s here) counted as a change would keep the source from ever
            // being quiet for 15 s: a failure within the bound, not a run that never ends.
            guard try await Self.cutsOverWhenQuiet(migration, within: .seconds(90)) else { return }
            #expect(try await Self.read(source, "") == (try await Self.read(target, "")))
            #expect(try await Self.read(target, "rooms/r/title") == #""new""#)
            #expect(try await Self.read(target, "stale") == "null")
        }
    }

    /// Whether `migration` cut over on its `--until-idle` within `timeout` (recorded and killed
    /// when not); when it did, expects it to end 0 with both sides equal.
    static func cutsOverWhenQuiet(_ migration: ChildProcess, within timeout: Duration) async throws -> Bool {
        guard try await migration.waitFor(inErrors: true, timeout: timeout, { $0.contains("the source was quiet") }) else {
            await migration.kill()
            Issue.record("the migration did not cut over once the source was quiet: \(migration.errorOutput)")
            return false
        }
        let ending = try await migration.wait()
        #expect(ending == .exited(0), "\(migration.errorOutput)\n\(migration.output)")
        #expect(migration.output.contains("The source and the target hold the same data."))
        return true
    }

    @Test func aTargetChangedBehindItsBackIsReported() async throws {
        try await Self.withServers { source, target in
            #expect(try await TestHTTPConnection.request(port: source.port, "PUT", "/a.json?ns=app", body: #"{"x":1,"y":2}"#).status == 200)
            let migration = try await Self.migrate(source, target, [])
            #expect(try await migration.waitFor(inErrors: true, timeout: .seconds(60)) { $0.contains("migrate: copied") })
            #expect(try await TestHTTPConnection.request(port: target.port, "PUT", "/a/y.json?ns=app", body: "3").status == 200)
            migration.signal(SIGINT)
            #expect(try await migration.wait() == .exited(3), "\(migration.errorOutput)")
            #expect(migration.output.contains("DIFFERENT"))
            #expect(migration.output.contains("1 keys differ."))
        }
    }

    @Test func anUnreachableSourceOrARefusedCredentialIsAClearError() async throws {
        try await Self.withServers(sourceArguments: ["--admin-secret", "right-secret-1234567890"]) { source, target in
            let refused = try await ChildProcess.run(
                ServerProcess.binary,
                arguments: [
                    "migrate", "--from", "http://127.0.0.1:\(source.port)?ns=app", "--from-auth", "wrong", "--url",
                    "http://127.0.0.1:\(target.port)", "--ns", "app", "--until-idle", "1",
                ])
            #expect(refused.ending == .exited(1), "\(refused.errors)")
            #expect(refused.errors.contains("error: the source answered 401"), "\(refused.errors)")
            let unreachable = try await ChildProcess.run(
                ServerProcess.binary,
                arguments: ["migrate", "--from", "http://127.0.0.1:1?ns=app", "--url", "http://127.0.0.1:\(target.port)", "--ns", "app"])
            #expect(unreachable.ending == .exited(2))
            #expect(unreachable.errors.contains("error: cannot reach the source http://127.0.0.1:1"), "\(unreachable.errors)")
            let unnamed = try await ChildProcess.run(ServerProcess.binary, arguments: ["migrate", "--from", "http://127.0.0.1:1"])
            #expect(unnamed.ending == .exited(64))
            #expect(unnamed.errors.contains("names no database"))
        }
    }
}
