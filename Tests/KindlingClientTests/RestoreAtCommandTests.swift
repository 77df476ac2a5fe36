import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// `kindling restore --at`, `kindling history` and `kindling get --at` as an operator runs them
/// after a bad write: through a running server, then offline on its data directory.
@Suite(.timeLimit(.minutes(2)))
struct RestoreAtCommandTests {
    /// Waits until the clock has passed `time`, so the next write is committed after it.
    static func pass(_ time: Int64) async {
        while Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) <= time { await Task.yield() }
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    @Test func aBadWriteIsUndoneThroughTheServerAndOffline() async throws {
        let folder = try RestoreCommandTests.Folder()
        defer { folder.remove() }
        let dataDirectory = folder.path + "/data"
        let configuration = ServerConfiguration(port: 0, storage: StorageConfiguration(directory: dataDirectory), logger: RestoreCommandTests.quiet())
        var beforeMistake: Int64 = 0
        try await KindlingServer.run(configuration) { server in
            let url = "http://127.0.0.1:\(server.port)?ns=app"
            #expect(
                try await TestHTTPConnection.request(port: server.port, "PUT", "/users.json?ns=app", body: #"{"ada":{"n":1},"bob":{"n":2}}"#).status
                    == 200)
            beforeMistake = Self.now()
            await Self.pass(beforeMistake)
            #expect(try await TestHTTPConnection.request(port: server.port, "DELETE", "/users.json?ns=app").status == 200)

            let listed = try await RestoreCommandTests.kindling(["history", "/users/ada", "--url", url])
            #expect(listed.status == 0, "\(listed.errors)")
            let lines = listed.output.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.first?.contains("#1  set     /users") == true)
            #expect(lines.last?.contains("#2  remove  /users") == true)

            let past = try await RestoreCommandTests.kindling(["get", "/users/bob", "--url", url, "--at", HistoryTime.iso8601(beforeMistake)])
            #expect(past.status == 0 && past.output == #"{"n":2}"# + "\n", "\(past.errors)")

            let refused = try await RestoreCommandTests.kindling(["restore", "--url", url, "--at", "\(beforeMistake)"])
            #expect(refused.status == 64 && refused.errors.contains("--to NAMESPACE or --in-place"))

            let copy = try await RestoreCommandTests.kindling(["restore", "--url", url, "--at", "\(beforeMistake)", "--to", "app-copy"])
            #expect(copy.status == 0, "\(copy.errors)")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/users/ada.json?ns=app-copy").text == #"{"n":1}"#)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/users.json?ns=app").text == "null")

            let restored = try await RestoreCommandTests.kindling([
                "restore", "--url", url, "--at", "\(beforeMistake)", "--path", "/users", "--in-place",
            ])
            #expect(restored.status == 0, "\(restored.errors)")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/users.json?ns=app").text == #"{"ada":{"n":1},"bob":{"n":2}}"#)
            let bad = try await RestoreCommandTests.kindling(["restore", "--url", url, "--at", "yesterday", "--in-place"])
            #expect(bad.status == 64 && bad.errors.contains("ISO 8601"))
        }
        // Offline, on the stopped server's directory: undo the restore (the instant before it).
        let listed = try await RestoreCommandTests.kindling(["history", "--data-dir", dataDirectory, "--ns", "app", "--json"])
        let changes = try JSONParser.parse(listed.output)
        guard case .array(let items) = changes, let restore = items.last, let time = restore["time"]?.numberValue else {
            Issue.record("no changes listed: \(listed.output) \(listed.errors)")
            return
        }
        #expect(items.count == 3)
        let undo = try await RestoreCommandTests.kindling([
            "restore", "--data-dir", dataDirectory, "--ns", "app", "--at", "\(Int64(time) - 1)", "--path", "/users", "--in-place",
        ])
        #expect(undo.status == 0, "\(undo.errors)")
        let export = try await RestoreCommandTests.kindling(["export", "--data-dir", dataDirectory, "--ns", "app"])
        #expect(export.output == "null\n")
    }
}
