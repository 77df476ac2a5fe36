import ArgumentParser
import Dispatch
import Foundation
import KindlingCore
import KindlingServer
import Logging

/// `kindling-bench startup`: how long a server takes to load a data directory, and its memory.
struct StartupBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "startup",
        abstract: "Load a data directory of a given JSON size (snapshot plus log) and report start-up time and resident memory."
    )

    @Option(help: "Size of the JSON data to load, in megabytes.")
    var megabytes = 100

    @Option(help: "Log records to add after the snapshot.")
    var logRecords = 100_000

    @Option(help: "Directory for the data (a fresh folder is made inside and removed).")
    var dataDirectory = NSTemporaryDirectory()

    @Flag(help: "Keep the generated data directory (to time `kindling serve` on it in a fresh process).")
    var keep = false

    mutating func run() async throws {
        var logger = Logger(label: "kindling-bench")
        logger.logLevel = .error
        let directory = dataDirectory + "/kindling-startup-\(UUID().uuidString)"
        defer { if keep { print("data kept in \(directory)") } else { try? FileManager.default.removeItem(atPath: directory) } }

        let generated = StartupBenchmark.usersJSON(megabytes: megabytes)
        var json = generated.json
        let user = generated.users
        print("generated \(json.count) bytes of JSON (\(user) users)")
        try OfflineDataDirectory.importJSON(json, directory: directory, namespace: "big", path: .root, logger: logger) { _ in }
        json = []

        // A log after the snapshot: a running server's writes.
        let writer = try await KindlingServer.start(ServerConfiguration(port: 0, storage: StorageConfiguration(directory: directory), logger: logger))
        try await writer.writeForBenchmark(namespace: "big", count: logRecords)
        try await writer.shutdown()
        let before = residentMegabytes()

        let started = DispatchTime.now().uptimeNanoseconds
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, storage: StorageConfiguration(directory: directory), logger: logger))
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let after = residentMegabytes()
        print("start-up with \(megabytes) MB of JSON and \(logRecords) log records: \((elapsed * 100).rounded() / 100) s")
        print(
            "resident memory: \(after) MB after loading (\(before) MB before); \((Double(after - before) / Double(megabytes) * 100).rounded() / 100)× the JSON size"
        )
        try await server.shutdown()
    }

    /// Users with a few fields each, about 150 bytes of JSON per user, to about `megabytes`
    /// million bytes: the JSON and the number of users.
    static func usersJSON(megabytes: Int) -> (json: [UInt8], users: Int) {
        var json: [UInt8] = Array(#"{"users":{"#.utf8)
        var user = 0
        while json.count < megabytes * 1_000_000 {
            if user > 0 { json.append(UInt8(ascii: ",")) }
            json.append(
                contentsOf:
                    #""u\#(user)":{"name":"User number \#(user)","email":"user\#(user)@example.com","score":\#(user % 997),"online":\#(user % 2 == 0)}"#
                    .utf8)
            user += 1
        }
        json.append(contentsOf: "}}".utf8)
        return (json, user)
    }
}
