import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer
import Logging

/// `kindling-bench history`: what keeping history costs and what a point-in-time restore takes on
/// a namespace of a given size: a namespace imported from `--megabytes` of JSON, then
/// `--log-records` writes through a server that snapshots (and so retires segments into the
/// history) every `--snapshot-mb`; then a rebuild of the instant halfway through the writes
/// (the imported snapshot, kept in the history, plus the first half of the log), and a full
/// restore of it into another namespace.
struct HistoryBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Time a point-in-time restore of a namespace of a given size, and measure the disk its history takes per write."
    )

    @Option(help: "Size of the JSON data of the namespace, in megabytes.")
    var megabytes = 100

    @Option(help: "Writes made after the import, half before the instant restored and half after.")
    var logRecords = 200_000

    @Option(name: .customLong("snapshot-mb"), help: "Log megabytes between the server's snapshots (each retires its log into the history).")
    var snapshotMegabytes = 8

    @Option(help: "Directory for the data (a fresh folder is made inside and removed).")
    var dataDirectory = NSTemporaryDirectory()

    mutating func run() async throws {
        var logger = Logger(label: "kindling-bench")
        logger.logLevel = .error
        let directory = dataDirectory + "/kindling-history-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let generated = StartupBenchmark.usersJSON(megabytes: megabytes)
        var json = generated.json
        let user = generated.users
        print("imported \(json.count) bytes of JSON (\(user) users)")
        // A history folder first, so the import's own retirement keeps what it replaces.
        try FileManager.default.createDirectory(atPath: directory + "/big/history", withIntermediateDirectories: true)
        try OfflineDataDirectory.importJSON(json, directory: directory, namespace: "big", path: .root, logger: logger) { _ in }
        json = []

        let storage = StorageConfiguration(directory: directory, snapshotAfterBytes: snapshotMegabytes << 20)
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, storage: storage, logger: logger))
        let started = ContinuousClock.now
        try await server.writeForBenchmark(namespace: "big", count: logRecords / 2)
        let instant = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        // The next write must come after the instant restored.
        while Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) <= instant { await Task.yield() }
        try await server.writeForBenchmark(namespace: "big", count: logRecords - logRecords / 2)
        let writing = ContinuousClock.now - started
        try await server.shutdown()
        let kept = Self.bytes(in: directory + "/big/history")
        print("\(logRecords) writes in \(writing) with history kept; history folder \(kept.bytes) bytes in \(kept.files) files")

        let rebuild = ContinuousClock.now
        let bytes = try OfflineDataDirectory.export(directory: directory, namespace: "big", path: .root, logger: logger).count
        print("reading the namespace now (snapshot and log): \(ContinuousClock.now - rebuild), \(bytes) bytes of JSON")
        let restoring = ContinuousClock.now
        let restored = try OfflineDataDirectory.restore(
            directory: directory, namespace: "big", at: instant, path: .root, into: "restored", logger: logger)
        print("restore of the instant halfway through the writes into another namespace: \(ContinuousClock.now - restoring), \(restored) bytes")
    }

    /// The bytes and files under `path`.
    static func bytes(in path: String) -> (bytes: Int, files: Int) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let sizes = names.compactMap { (try? FileManager.default.attributesOfItem(atPath: path + "/" + $0)[.size]) as? Int }
        return (sizes.reduce(0, +), sizes.count)
    }
}
