import Foundation
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// `kindling restore --from` as an operator runs it, on a backup `--backup-dir` wrote: offline
/// into a data directory, and through a running server; and `kindling serve`'s backup options.
@Suite(.timeLimit(.minutes(2)))
struct RestoreCommandTests {
    static let data = #"{"users":{"ada":{"name":"Ada","score":{".value":36,".priority":1}}},"ünïcødé 🔥":{"日本":"語"},"list":{"0":"a","1":"b"}}"#
    static let rules = """
        {
          // kept as given
          "rules": {".read": true, ".write": "auth != null"}
        }
        """

    /// A folder for one test's files.
    struct Folder {
        let path = NSTemporaryDirectory() + "kindling-restore-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Runs `kindling` to its end: status, standard output, standard error.
    static func kindling(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        let executable = try #require(CommandLineTests.executable, "kindling executable not built")
        let run = try await ChildProcess.run(executable.path, arguments: arguments)
        switch run.ending {
        case .exited(let status): return (status, run.output, run.errors)
        case .signalled(let signal): return (128 + signal, run.output, run.errors)
        }
    }

    static func quiet() -> Logger {
        var logger = Logger(label: "kindling-restore-test")
        logger.logLevel = .critical
        return logger
    }

    /// A backup of namespace `shop` holding `data` and `rules`, as `--backup-dir` writes it; and
    /// the namespace's export form.
    static func makeBackup(in directory: String) async throws -> (file: String, export: String) {
        var file = ""
        var export = ""
        let configuration = ServerConfiguration(port: 0, backup: BackupConfiguration(directory: directory), logger: quiet())
        try await KindlingServer.run(configuration) { server in
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/.json?ns=shop", body: data).status == 200)
            let rulesSet = try await TestHTTPConnection.request(
                port: server.port, "PUT", "/.settings/rules.json?ns=shop", headers: [("Authorization", "Bearer owner")], body: rules)
            #expect(rulesSet.status == 200)
            export = try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=shop&format=export").text
            file = try #require(await server.backUpNow()?.written["shop"])
        }
        return (file, export)
    }

    @Test func restoresABackupOfflineIntoADataDirectory() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let backup = try await Self.makeBackup(in: folder.path + "/backups")
        let dataDirectory = folder.path + "/data"
        let restore = try await Self.kindling(["restore", "--from", backup.file, "--ns", "copy", "--data-dir", dataDirectory])
        #expect(restore.status == 0, "\(restore.errors)")
        #expect(restore.errors.contains("restoring the backup's rules too"))
        let export = try await Self.kindling(["export", "--data-dir", dataDirectory, "--ns", "copy"])
        #expect(export.status == 0 && export.output == backup.export + "\n")
        // The rules are the namespace's own now, exactly as they were given, for the server to load.
        #expect(try String(contentsOfFile: dataDirectory + "/copy/rules.json", encoding: .utf8) == Self.rules)
        // A server started on the directory serves both.
        let configuration = ServerConfiguration(port: 0, storage: StorageConfiguration(directory: dataDirectory), logger: Self.quiet())
        try await KindlingServer.run(configuration) { server in
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=copy&format=export").text == backup.export)
            let rules = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.settings/rules.json?ns=copy", headers: [("Authorization", "Bearer owner")])
            #expect(rules.text == Self.rules)
        }
    }

    @Test func restoresABackupThroughARunningServerAsOneWrite() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let backup = try await Self.makeBackup(in: folder.path + "/backups")
        try await KindlingServer.run(ServerConfiguration(port: 0, logger: Self.quiet())) { server in
            let url = "http://127.0.0.1:\(server.port)"
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/old.json?ns=copy", body: "true").status == 200)
            let restore = try await Self.kindling(["restore", "--from", backup.file, "--url", url, "--ns", "copy"])
            #expect(restore.status == 0, "\(restore.errors)")
            // The whole namespace is the backup's: what was there before is gone.
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=copy&format=export").text == backup.export)
            let rules = try await Self.kindling(["rules", "get", "--url", url, "--ns", "copy"])
            #expect(rules.status == 0 && rules.output == Self.rules)

            // Plain JSON works too, at a path; a backup's rules are not taken for a subtree.
            let plain = folder.path + "/plain.json"
            try #"{"x":{"y":1}}"#.write(toFile: plain, atomically: true, encoding: .utf8)
            let sub = try await Self.kindling(["restore", "--from", plain, "--url", url, "--ns", "copy", "--path", "/sub"])
            #expect(sub.status == 0, "\(sub.errors)")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/sub.json?ns=copy").text == #"{"x":{"y":1}}"#)
            let data = try await Self.kindling(["restore", "--from", backup.file, "--url", url, "--ns", "other", "--path", "/nested"])
            #expect(data.status == 0 && data.errors.contains("not restoring the backup's rules"))
        }
    }

    @Test func aDamagedOrMissingBackupChangesNothing() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let backup = try await Self.makeBackup(in: folder.path + "/backups")
        let whole = try #require(FileManager.default.contents(atPath: backup.file))
        let truncated = folder.path + "/truncated_data.json.gz"
        _ = FileManager.default.createFile(atPath: truncated, contents: whole.prefix(whole.count - 4))
        try await KindlingServer.run(ServerConfiguration(port: 0, logger: Self.quiet())) { server in
            let url = "http://127.0.0.1:\(server.port)"
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/keep.json?ns=copy", body: "1").status == 200)
            let damaged = try await Self.kindling(["restore", "--from", truncated, "--url", url, "--ns", "copy"])
            #expect(damaged.status == 64 && damaged.errors.contains("cannot read the backup"))
            #expect(try await Self.kindling(["restore", "--from", folder.path + "/missing.json", "--url", url, "--ns", "copy"]).status == 64)
            #expect(try await Self.kindling(["restore", "--url", url, "--ns", "copy"]).status == 64)
            #expect(try await Self.kindling(["restore", "--from", backup.file, "--rules", backup.file, "--no-rules", "--ns", "copy"]).status == 64)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/.json?ns=copy").text == #"{"keep":1}"#)
        }
    }

    @Test func serveRefusesBackupOptionsItCannotHonour() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let blocker = folder.path + "/file"
        _ = FileManager.default.createFile(atPath: blocker, contents: Data())
        for arguments in [
            ["--backup-every", "1h"], ["--backup-keep", "3"], ["--backup-dir", folder.path, "--backup-every", "30s"],
            ["--backup-dir", folder.path, "--backup-every", "31d"], ["--backup-dir", folder.path, "--backup-every", "1w"],
            ["--backup-dir", folder.path, "--backup-keep", "0"], ["--backup-dir", blocker + "/backups"],
        ] {
            let serve = try await Self.kindling(["serve", "--port", "0", "--in-memory"] + arguments)
            #expect(serve.status == 64, "\(arguments): \(serve.errors)")
        }
        let help = try await Self.kindling(["serve", "--help"])
        #expect(help.output.contains("--backup-dir") && help.output.contains("1m to 30d"))
    }
}
