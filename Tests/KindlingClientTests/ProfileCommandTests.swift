import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// `kindling profile` end to end, the built executable against a server: it records what
/// clients do for `--duration`, saves the raw records, reports on them (`--input`, text and
/// JSON), and stops with a report at Ctrl-C.
@Suite(.timeLimit(.minutes(3)))
struct ProfileCommandTests {
    /// How many profiler streams the server has opened, from its metrics (loopback needs no
    /// credential): the profiler is recording once this counts it.
    static func profilersOpened(port: Int) async throws -> Int {
        let metrics = try await TestHTTPConnection.request(port: port, "GET", "/.metrics").text
        let line = metrics.split(separator: "\n").first { $0.contains(#"action="profile""#) && $0.contains(#"outcome="ok""#) }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Int(Double($0) ?? 0) } ?? 0
    }

    static func withServer(_ body: (Int) async throws -> Void) async throws {
        var logger = Logger(label: "kindling-profile-test")
        logger.logLevel = .critical
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, logger: logger))
        do {
            try await body(server.port)
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    @Test func recordsForADurationThenReports() async throws {
        let executable = try #require(CommandLineTests.executable, "kindling executable not found next to \(CommandLine.arguments[0])")
        try await Self.withServer { port in
            let raw = FileManager.default.temporaryDirectory.appendingPathComponent("profile-\(UUID().uuidString).jsonl")
            defer { try? FileManager.default.removeItem(at: raw) }
            // The duration bounds the test's requests below (a handful, made as soon as the
            // profiler is counted), not a wait for them.
            let profile = try await ChildProcess.start(
                executable.path,
                arguments: ["profile", "--url", "http://127.0.0.1:\(port)", "--ns", "cliprof", "--duration", "20s", "--raw", "--output", raw.path])
            #expect(try await eventually(within: .seconds(20)) { try await Self.profilersOpened(port: port) == 1 })
            for name in ["a", "b", "c"] {
                #expect(try await TestHTTPConnection.request(port: port, "PUT", "/room/\(name).json?ns=cliprof", body: #"{"t":"hi"}"#).status == 200)
            }
            var downloaded = 0
            for _ in 0..<2 { downloaded += try await TestHTTPConnection.request(port: port, "GET", "/room.json?ns=cliprof").body.count }
            #expect(try await TestHTTPConnection.request(port: port, "PATCH", "/room.json?ns=cliprof", body: #"{"d":1}"#).status == 200)
            #expect(try await profile.wait() == .exited(0))
            #expect(profile.errorOutput.contains("10 operations recorded."))

            let lines = try String(contentsOf: raw, encoding: .utf8).split(separator: "\n")
            let names = try lines.map { try #require(try JSONParser.parse(String($0))["name"]?.stringValue) }
            #expect(names.filter { $0 == "rest-write" }.count == 3)
            #expect(names.filter { $0 == "rest-read" }.count == 2)
            #expect(names.filter { $0 == "rest-update" }.count == 1)
            #expect(names.filter { $0 == "listener-broadcast" }.count == 4)

            let text = try await CommandLineTests.run(["profile", "--input", raw.path])
            #expect(text.status == 0)
            #expect(text.output.hasPrefix("Report operations collected from "))
            for table in ["Read Speed", "Write Speed", "Broadcast Speed", "Downloaded Bytes", "Uploaded Bytes", "Unindexed Queries"] {
                #expect(text.output.contains(table + "\n┌"))
            }
            #expect(text.output.contains("│ /room/a │ 10 B  │ 1     │ 10 B    │"))

            let json = try await CommandLineTests.run(["profile", "--input", raw.path, "--json"])
            #expect(json.status == 0)
            let report = try JSONParser.parse(json.output)
            func rows(_ table: String) -> [[JSONValue]] {
                guard case .array(let rows)? = report[table]?["data"] else { return [] }
                return rows.compactMap { row in
                    guard case .array(let cells) = row else { return nil }
                    return cells
                }
            }
            #expect(rows("writeSpeed").count == 4)
            let reads = rows("readSpeed")
            #expect(reads.count == 1 && reads.first?.first == "/room" && reads.first?[1] == 2)
            let room = rows("downloadedBytes").first { $0.first == "/room" }
            #expect(room?[1] == .string("\(downloaded) B") && room?[2] == "3")  // two reads and the PATCH's broadcast
        }
    }

    @Test func stopsAtCtrlCWithAReport() async throws {
        let executable = try #require(CommandLineTests.executable, "kindling executable not found next to \(CommandLine.arguments[0])")
        try await Self.withServer { port in
            let profile = try await ChildProcess.start(executable.path, arguments: ["profile", "--url", "http://127.0.0.1:\(port)", "--ns", "stop"])
            #expect(try await eventually(within: .seconds(20)) { try await Self.profilersOpened(port: port) == 1 })
            profile.signal(SIGINT)
            #expect(try await profile.wait() == .exited(0))
            #expect(profile.output.contains("Write Speed"))
        }
    }

    @Test func aProfilerTheServerRefusesExitsOne() async throws {
        try await Self.withServer { port in
            let refused = try await CommandLineTests.run(
                ["profile", "--url", "http://127.0.0.1:\(port)", "--duration", "1"],
                environment: ["KINDLING_ADMIN_SECRET": "eyJhbGciOiJub25lIn0.e30."])
            #expect(refused.status == 1)
            #expect(try await CommandLineTests.run(["profile", "--input", "/nonexistent/records.jsonl"]).status == 64)
            #expect(try await CommandLineTests.run(["profile", "--raw", "--json"]).status == 64)
        }
    }
}
