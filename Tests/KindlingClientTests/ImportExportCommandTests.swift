import Foundation
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// `kindling import` and `kindling export` through a server, as an operator runs them: in many
/// small steps, byte for byte back in export form, gzipped, resumed after a refused step, and
/// from the files a Firebase user has (a hosted backup with its rules, the emulator's export).
@Suite(.timeLimit(.minutes(4)))
struct ImportExportCommandTests {
    typealias Folder = RestoreCommandTests.Folder

    static func kindling(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        try await RestoreCommandTests.kindling(arguments)
    }

    static func quiet() -> Logger { RestoreCommandTests.quiet() }

    /// A document with what an import must carry: priorities on objects and leaves, arrays,
    /// keys that read as numbers, Unicode, escapes, a wide list and deep nesting.
    static var document: String {
        let wide = (0..<3000).map { #""item\#($0)":{"n":\#($0),"text":"value \#($0) \"quoted\" \\ é","ok":\#($0 % 2 == 0)}"# }
        var deep = "1"
        for level in 0..<20 { deep = #"{"l\#(level)":\#(deep)}"# }
        return """
            {"wide":{\(wide.joined(separator: ","))},"deep":\(deep),"list":["a","b",null,{"c":1}],
             "prioritised":{"x":{".value":1.5,".priority":"p"},"y":{"z":true,".priority":7}},"10":"ten","9":"nine",
             "ünïcødé 🔥":{"日本":"語"},"n":-1.25e-7,".priority":3}
            """
    }

    /// How many REST connections the server on `port` has taken so far
    /// (`kindling_connections_opened_total`), this request's own among them.
    static func restConnectionsOpened(port: Int) async throws -> Int {
        let metrics = try await TestHTTPConnection.request(port: port, "GET", "/.metrics").text
        let prefix = #"kindling_connections_opened_total{transport="rest"} "#
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix(prefix) })
        return try #require(Int(line.dropFirst(prefix.count)))
    }

    /// The document's export form as the server writes it (what an import must read back).
    static func exportForm(of json: String, port: Int) async throws -> String {
        #expect(try await TestHTTPConnection.request(port: port, "PUT", "/.json?ns=source", body: json).status == 200)
        return try await TestHTTPConnection.request(port: port, "GET", "/.json?ns=source&format=export").text
    }

    @Test func importsInStepsAndExportsBackByteForByte() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        try await KindlingServer.run(ServerConfiguration(port: 0, logger: Self.quiet())) { server in
            let url = "http://127.0.0.1:\(server.port)"
            let export = try await Self.exportForm(of: Self.document, port: server.port)
            let file = folder.path + "/data.json"
            try export.write(toFile: file, atomically: true, encoding: .utf8)
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/.json?ns=copy", body: #"{"old":1}"#).status == 200)

            let connectionsBefore = try await Self.restConnectionsOpened(port: server.port)
            let imported = try await Self.kindling(["import", file, "--url", url, "--ns", "copy", "--chunk-kb", "4"])
            #expect(imported.status == 0, "\(imported.errors)")
            // Many steps of about 4 KB, each one write; the position file is gone once done.
            let steps = try #require(
                imported.errors.split(separator: " ").firstIndex(of: "steps").map { Int(imported.errors.split(separator: " ")[$0 - 1]) })
            #expect((steps ?? 0) > 40, "\(imported.errors)")
            // All of them on one connection (and this count's own request on another), not one
            // each: a client per request kept memory for each, so a big import grew with the file.
            #expect(try await Self.restConnectionsOpened(port: server.port) - connectionsBefore <= 2)
            #expect(!FileManager.default.fileExists(atPath: file + ".import-position"))
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=copy&format=export").text == export)

            // The streamed export, read in batches of about 4 KB, is the file again.
            let out = folder.path + "/out.json"
            let exported = try await Self.kindling(["export", "--url", url, "--ns", "copy", "--chunk-kb", "4", "-o", out])
            #expect(exported.status == 0, "\(exported.errors)")
            #expect(try String(contentsOfFile: out, encoding: .utf8) == export)
            // A subtree, and the plain form.
            let wide = try await Self.kindling(["export", "--url", url, "--ns", "copy", "--path", "wide", "--chunk-kb", "2"])
            let wideExport = try await TestHTTPConnection.request(port: server.port, "GET", "/wide.json?ns=copy&format=export").text
            #expect(wide.output == wideExport + "\n")
            let plain = try await Self.kindling(["export", "--url", url, "--ns", "copy", "--format", "plain", "--path", "prioritised"])
            #expect(plain.output == #"{"x":1.5,"y":{"z":true}}"# + "\n")

            // Gzip out and in.
            let zipped = folder.path + "/out.json.gz"
            #expect(try await Self.kindling(["export", "--url", url, "--ns", "copy", "-o", zipped]).status == 0)
            let head = try #require(FileManager.default.contents(atPath: zipped)).prefix(2)
            #expect(Array(head) == [0x1f, 0x8b])
            let again = try await Self.kindling(["import", zipped, "--url", url, "--ns", "third", "--chunk-kb", "16"])
            #expect(again.status == 0, "\(again.errors)")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=third&format=export").text == export)
        }
    }

    @Test func anImportStoppedByARefusedStepResumesWhereItStopped() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let dataDirectory = folder.path + "/data"
        let file = folder.path + "/data.json"
        // A value of 40 KB in the middle: a server that takes bodies of 32 KB refuses its step.
        let before = (0..<300).map { #""a\#($0)":"\#(String(repeating: "x", count: 40))""# }.joined(separator: ",")
        let after = (0..<300).map { #""c\#($0)":\#($0)"# }.joined(separator: ",")
        let json = #"{"list":{\#(before),"b":"\#(String(repeating: "y", count: 40_000))",\#(after)}}"#
        try json.write(toFile: file, atomically: true, encoding: .utf8)
        let storage = StorageConfiguration(directory: dataDirectory)
        var small = ServerConfiguration(port: 0, storage: storage, logger: Self.quiet())
        small.maxRESTBodyBytes = 32 * 1024
        try await KindlingServer.run(small) { server in
            let stopped = try await Self.kindling(["import", file, "--url", "http://127.0.0.1:\(server.port)", "--ns", "app", "--chunk-kb", "1"])
            #expect(stopped.status == 1, "\(stopped.errors)")
            #expect(
                stopped.errors.contains("was not applied")
                    && stopped.errors.contains(
                        "Resume with: kindling import \(file) --resume --url http://127.0.0.1:\(server.port) --ns app --chunk-kb 1")
            )
            #expect(FileManager.default.fileExists(atPath: file + ".import-position"))
            // Without --resume the saved position is not overwritten by a new start.
            let fresh = try await Self.kindling(["import", file, "--url", "http://127.0.0.1:\(server.port)", "--ns", "app", "--chunk-kb", "1"])
            #expect(fresh.status == 64 && fresh.errors.contains("add --resume"))
            // What the applied steps wrote is there: the list up to the big value.
            let partial = try await TestHTTPConnection.request(port: server.port, "GET", "/list.json?ns=app&shallow=true").text
            #expect(partial.contains(#""a299":true"#) && !partial.contains(#""c0""#))
        }
        try await KindlingServer.run(ServerConfiguration(port: 0, storage: storage, logger: Self.quiet())) { server in
            let url = "http://127.0.0.1:\(server.port)"
            // Another step size is another cut: refused.
            let other = try await Self.kindling(["import", file, "--url", url, "--ns", "app", "--chunk-kb", "2", "--resume"])
            #expect(other.status == 64 && other.errors.contains("--chunk-kb"), "\(other.errors)")
            let resumed = try await Self.kindling(["import", file, "--url", url, "--ns", "app", "--chunk-kb", "1", "--resume"])
            #expect(resumed.status == 0, "\(resumed.errors)")
            #expect(!FileManager.default.fileExists(atPath: file + ".import-position"))
            let expected = try await Self.exportForm(of: json, port: server.port)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=app&format=export").text == expected)
        }
    }

    @Test func badInputIsReportedAtItsByteBeforeAnythingIsWritten() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        try await KindlingServer.run(ServerConfiguration(port: 0, logger: Self.quiet())) { server in
            let url = "http://127.0.0.1:\(server.port)"
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/.json?ns=app", body: #"{"keep":1}"#).status == 200)
            let cases: [(text: String, message: String)] = [
                (#"{"a":{"b":1},"c":[1,2"#, "The JSON ends early at byte 21"),
                (#"{"a":1,"bad/key":2}"#, "Invalid key at byte 7"),
                ("not json", "Invalid JSON at byte 1: unexpected character"),
                (#"{"a":1} {"b":2}"#, "Invalid JSON at byte 8: unexpected text after the value"),
            ]
            for (index, item) in cases.enumerated() {
                let file = folder.path + "/bad\(index).json"
                try item.text.write(toFile: file, atomically: true, encoding: .utf8)
                let run = try await Self.kindling(["import", file, "--url", url, "--ns", "app", "--chunk-kb", "1"])
                #expect(run.status == 64 && run.errors.contains(item.message) && run.errors.contains("Nothing was written"), "\(run.errors)")
            }
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=app").text == #"{"keep":1}"#)

            // Without the check, the steps before the fault are applied, and the error says so.
            let long = (0..<200).map { #""k\#($0)":"\#(String(repeating: "v", count: 30))""# }.joined(separator: ",")
            let file = folder.path + "/cut.json"
            try ("{" + long).write(toFile: file, atomically: true, encoding: .utf8)
            let run = try await Self.kindling(["import", file, "--url", url, "--ns", "app", "--chunk-kb", "1", "--no-check"])
            #expect(run.status == 64 && run.errors.contains("The JSON ends early") && run.errors.contains("steps are applied"), "\(run.errors)")
            // The rest of the file, appended, completes it from where it stopped.
            try ("{" + long + #","last":true}"#).write(toFile: file, atomically: true, encoding: .utf8)
            let resumed = try await Self.kindling(["import", file, "--url", url, "--ns", "app", "--chunk-kb", "1", "--resume"])
            #expect(resumed.status == 0, "\(resumed.errors)")
            let shallow = try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=app&shallow=true").text
            #expect(shallow.contains(#""k199":true"#) && shallow.contains(#""last":true"#) && !shallow.contains("keep"))
        }
    }

    @Test func readsAHostedBackupWithItsRulesAndTheEmulatorsExport() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        try await KindlingServer.run(ServerConfiguration(port: 0, logger: Self.quiet())) { server in
            let url = "http://127.0.0.1:\(server.port)"
            let export = try await Self.exportForm(of: Self.document, port: server.port)
            // A hosted backup: gzipped data, and its rules beside it.
            let gzipped = try await Self.kindling([
                "export", "--url", url, "--ns", "source", "-o", folder.path + "/2024-05-01T12:00:00Z_shop_data.json.gz",
            ])
            #expect(gzipped.status == 0)
            try RestoreCommandTests.rules.write(toFile: folder.path + "/2024-05-01T12:00:00Z_shop_rules.json", atomically: true, encoding: .utf8)
            let hosted = try await Self.kindling(["import", folder.path + "/2024-05-01T12:00:00Z_shop_data.json.gz", "--url", url, "--ns", "shop"])
            #expect(hosted.status == 0 && hosted.errors.contains("rules of namespace shop set"), "\(hosted.errors)")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=shop&format=export").text == export)
            let rules = try await Self.kindling(["rules", "get", "--url", url, "--ns", "shop"])
            #expect(rules.output == RestoreCommandTests.rules)

            // The emulator's export directory: each namespace's file into that namespace.
            let directory = folder.path + "/emulator"
            try FileManager.default.createDirectory(atPath: directory + "/database_export", withIntermediateDirectories: true)
            try #"{"version":"13.0.0","database":{"version":"4.11.2","path":"database_export"}}"#.write(
                toFile: directory + "/firebase-export-metadata.json", atomically: true, encoding: .utf8)
            try export.write(toFile: directory + "/database_export/alpha.json", atomically: true, encoding: .utf8)
            try #"{"b":2}"#.write(toFile: directory + "/database_export/beta.json", atomically: true, encoding: .utf8)
            let all = try await Self.kindling(["import", directory, "--url", url])
            #expect(all.status == 0, "\(all.errors)")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=alpha&format=export").text == export)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=beta").text == #"{"b":2}"#)
            #expect(all.errors.contains("holds no rules"))
            // One namespace of it, by name; a name it does not hold is an error that lists those it does.
            let one = try await Self.kindling(["import", directory, "--url", url, "--ns", "beta", "--path", "copy"])
            #expect(one.status == 0, "\(one.errors)")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/copy.json?ns=beta").text == #"{"b":2}"#)
            let missing = try await Self.kindling(["import", directory, "--url", url, "--ns", "gamma"])
            #expect(missing.status == 64 && missing.errors.contains("alpha, beta"))
        }
    }
}
