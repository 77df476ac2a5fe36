import Dispatch
import Foundation
import KindlingCore
import KindlingTesting
import Synchronization
import Testing

@testable import KindlingServer

/// Scheduled backups, run on demand (`backUpNow`, as the schedule runs them): what they hold,
/// that they restore, what they keep, that writes go on during one, and that a failing one
/// leaves the server serving.
@Suite(.timeLimit(.minutes(2)))
struct BackupTests {
    static let data = """
        {"users":{"ada":{"name":"Ada Lovelace","score":{".value":36,".priority":1}},"grace":{".priority":"b","name":"Grace"}},
         "ünïcødé 🔥":{"日本":"語","emoji":"🙂"},"list":{"0":"a","1":"b"},"n":-0.25}
        """
    static let rules = """
        {
          // Comments and layout are kept: the file is the rules as they were given.
          "rules": {".read": true, ".write": true, "users": {".indexOn": ["name"]}}
        }
        """
    static let owner = [("Authorization", "Bearer owner")]

    static func temporaryDirectory() -> String { NSTemporaryDirectory() + "kindling-backup-\(UUID().uuidString)" }

    static func put(_ port: Int, _ uri: String, _ body: String, headers: [(String, String)] = []) async throws {
        let response = try await TestHTTPConnection.request(port: port, "PUT", uri, headers: headers, body: body)
        #expect(response.status == 200, "\(uri): \(response.text)")
    }

    static func export(_ port: Int, _ namespace: String) async throws -> String {
        try await TestHTTPConnection.request(port: port, "GET", "/.json?ns=\(namespace)&format=export").text
    }

    static func files(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test func aBackupRestoresIntoAFreshNamespaceAsTheSameTree() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer({ $0.backup = BackupConfiguration(directory: directory) }) { server in
            try await Self.put(server.port, "/.json?ns=shop", Self.data)
            try await Self.put(server.port, "/.settings/rules.json?ns=shop", Self.rules, headers: Self.owner)
            let run = try #require(await server.backUpNow())
            #expect(run.failed.isEmpty && run.skipped.isEmpty)
            let file = try #require(run.written["shop"])
            #expect(file.hasPrefix(directory + "/") && file.hasSuffix("_shop_data.json.gz"))
            // Gzip by its magic bytes, and the rules beside it exactly as they were given.
            #expect(Array(try #require(FileManager.default.contents(atPath: file)).prefix(2)) == [0x1f, 0x8b])
            let rulesFile = try #require(BackupFile.rulesBeside(file))
            #expect(try String(contentsOfFile: rulesFile, encoding: .utf8) == Self.rules)

            // Restoring is one write of the file's JSON: the same tree, priorities and keys included.
            let json = try BackupFile.read(file)
            try await Self.put(server.port, "/.json?ns=restored", String(decoding: json, as: UTF8.self))
            let original = try await Self.export(server.port, "shop")
            #expect(original == (try Node(jsonText: Self.data)).jsonText(format: .export))
            #expect(try await Self.export(server.port, "restored") == original)
        }
    }

    @Test func onlyTheNewestBackupsAreKept() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // A backup a killed process was writing: never taken for one, and cleared.
        let leftover = BackupFileName(time: 1_000, namespace: "a", kind: .data, isTemporary: true).description
        _ = FileManager.default.createFile(atPath: directory + "/" + leftover, contents: Data([0x1f, 0x8b, 0]))
        _ = FileManager.default.createFile(atPath: directory + "/notes.txt", contents: Data("mine".utf8))
        try await withServer({ $0.backup = BackupConfiguration(directory: directory, keep: 2) }) { server in
            var written: [String] = []
            for value in 1...3 {
                try await Self.put(server.port, "/v.json?ns=a", "\(value)")
                try await Self.put(server.port, "/v.json?ns=b", "\(value)")
                let run = try #require(await server.backUpNow())
                written.append(try #require(run.written["a"]))
                #expect(run.written["b"] != nil)
            }
            let kept = try Self.files(directory)
            #expect(kept.filter { $0.hasSuffix("_a_data.json.gz") }.map { directory + "/" + $0 } == Array(written.suffix(2)))
            #expect(kept.filter { $0.hasSuffix("_a_rules.json") }.count == 2)
            #expect(kept.filter { $0.hasSuffix("_b_data.json.gz") }.count == 2)
            #expect(!kept.contains(leftover) && kept.contains("notes.txt"))
            #expect(kept.count == 9)
            #expect(try BackupFile.read(try #require(written.last)) == Array("{\"v\":3}".utf8))
        }
    }

    @Test func aWriteDuringABackupIsNeitherBlockedNorIncluded() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer({ $0.backup = BackupConfiguration(directory: directory) }) { server in
            try await Self.put(server.port, "/.json?ns=live", #"{"a":1,"b":{"c":2}}"#)
            let scheduler = try #require(server.backups)
            // The backup stops between taking the tree and writing it until the write below is done.
            let captured = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let backup = Task {
                await scheduler.backUpNow { _ in
                    captured.signal()
                    _ = release.wait(timeout: .now() + 60)
                }
            }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    captured.wait()
                    done.resume()
                }
            }
            // The namespace takes writes while its backup is under way.
            try await Self.put(server.port, "/.json?ns=live", #"{"a":10,"b":{"c":20},"d":30}"#)
            #expect(try await Self.export(server.port, "live") == #"{"a":10,"b":{"c":20},"d":30}"#)
            release.signal()
            let file = try #require(await backup.value.written["live"])
            // The backup is the tree as it was at one instant: all of before, none of after.
            #expect(try BackupFile.read(file) == Array(#"{"a":1,"b":{"c":2}}"#.utf8))
        }
    }

    @Test func aFailingBackupIsCountedAndTheServerKeepsServing() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer({ $0.backup = BackupConfiguration(directory: directory) }) { server in
            try await Self.put(server.port, "/x.json?ns=fails", "1")
            // The directory is gone and a file is where it was: nothing can be created in it.
            try FileManager.default.removeItem(atPath: directory)
            _ = FileManager.default.createFile(atPath: directory, contents: Data())
            let run = try #require(await server.backUpNow())
            #expect(run.written.isEmpty && run.failed["fails"] != nil)
            try await Self.put(server.port, "/x.json?ns=fails", "2")
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/x.json?ns=fails").text == "2")
            let metrics = try PrometheusText(try await TestHTTPConnection.request(port: server.port, "GET", "/.metrics").text)
            #expect(metrics.value("kindling_backup_failures_total") == 1)
            #expect(metrics.value("kindling_backups_total") == 0)
            // Once the directory is back, the next backup is written and counted.
            try FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let again = try #require(await server.backUpNow())
            #expect(again.written["fails"] != nil && again.failed.isEmpty)
            let after = try PrometheusText(try await TestHTTPConnection.request(port: server.port, "GET", "/.metrics").text)
            #expect(after.value("kindling_backups_total") == 1)
            #expect((after.value("kindling_backup_last_success_timestamp_seconds") ?? 0) > 1_700_000_000)
            #expect((after.value("kindling_backup_bytes_total") ?? 0) > 0)
        }
    }

    @Test func namespacesLoadedFromADataDirectoryAreBackedUp() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer({ $0.storage = StorageConfiguration(directory: directory + "/data") }) { server in
            try await Self.put(server.port, "/x.json?ns=kept", #"{".value":"on disk",".priority":7}"#)
        }
        try await withServer({
            $0.storage = StorageConfiguration(directory: directory + "/data")
            $0.backup = BackupConfiguration(directory: directory + "/backups")
        }) { server in
            let run = try #require(await server.backUpNow())
            let file = try #require(run.written["kept"])
            #expect(try BackupFile.read(file) == Array(#"{"x":{".value":"on disk",".priority":7}}"#.utf8))
        }
    }

    @Test func namespacesWithoutDataAreLeftOut() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer({ $0.backup = BackupConfiguration(directory: directory) }) { server in
            try await Self.put(server.port, "/x.json?ns=emptied", "1")
            try await Self.put(server.port, "/x.json?ns=emptied", "null")
            let run = try #require(await server.backUpNow())
            #expect(run.skipped == ["emptied"] && run.written.isEmpty)
            #expect(try Self.files(directory).isEmpty)
        }
    }

    @Test func aBackupDirectoryThatCannotBeCreatedRefusesTheStart() async throws {
        let file = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: file) }
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        await #expect(throws: BackupError.self) {
            try await withServer({ $0.backup = BackupConfiguration(directory: file + "/backups") }) { _ in }
        }
        await #expect(throws: BackupError.self) {
            try await withServer({ $0.backup = BackupConfiguration(directory: file + "-ok", interval: .seconds(1)) }) { _ in }
        }
    }

    @Test func withoutABackupDirectoryThereAreNoBackups() async throws {
        try await withServer { server in
            #expect(await server.backUpNow() == nil)
        }
    }
}
