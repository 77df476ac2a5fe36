import ArgumentParser
import Dispatch
import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging

/// `kindling-bench writes`: acknowledged durable writes per second from many writers.
struct WritesBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writes",
        abstract: "M writers on distinct paths, each waiting for its ack: acknowledged writes/s and ack latency, per fsync mode."
    )

    @Option(help: "Concurrent writers (comma-separated list to run several).")
    var writers = "1,16,256"

    @Option(help: "fsync modes to measure (comma-separated): always, everysec, never, memory.")
    var modes = "always,everysec,never"

    @Option(help: "Seconds to measure each combination.")
    var seconds = 5.0

    @Option(help: "Writes each writer keeps in flight.")
    var pipeline = 1

    @Option(help: "Directory for the data (a fresh folder is made inside and removed).")
    var dataDirectory = NSTemporaryDirectory()

    mutating func run() async throws {
        let counts = writers.split(separator: ",").compactMap { Int($0) }
        for mode in modes.split(separator: ",").map(String.init) {
            for count in counts {
                try await measure(mode: mode, writers: count)
            }
        }
    }

    private func measure(mode: String, writers count: Int) async throws {
        var logger = Logger(label: "kindling-bench")
        logger.logLevel = .error
        let directory = dataDirectory + "/kindling-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = FsyncMode(rawValue: mode).map { StorageConfiguration(directory: directory, fsync: $0) }
        let server = try await KindlingServer.start(ServerConfiguration(port: 0, storage: storage, logger: logger))
        var clients: [TestClient] = []
        for _ in 0..<count { clients.append(try await TestClient.connect(port: server.port, namespace: "writes")) }
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let depth = pipeline
        let started = DispatchTime.now().uptimeNanoseconds
        let latencies = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    var samples: [UInt64] = []
                    var value = 0
                    while ContinuousClock.now < deadline {
                        var sent: [Int: UInt64] = [:]
                        for _ in 0..<depth {
                            value += 1
                            let body = JSONValue.object([JSONMember("p", .string("/w/\(index)")), JSONMember("d", .number(Double(value)))])
                            sent[try await client.sendRequest("p", body)] = DispatchTime.now().uptimeNanoseconds
                        }
                        while !sent.isEmpty {
                            let message = try await client.nextMessage(timeout: .seconds(30))
                            if let number = message["d"]?["r"]?.numberValue, let start = sent.removeValue(forKey: Int(number)) {
                                samples.append(DispatchTime.now().uptimeNanoseconds - start)
                            }
                        }
                    }
                    return samples
                }
            }
            var all: [UInt64] = []
            for try await part in group { all.append(contentsOf: part) }
            return all
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        print("fsync \(mode), \(count) writers: \(Int(Double(latencies.count) / elapsed)) acknowledged writes/s; ack latency \(latencySummary(latencies))")
        for client in clients { await client.abort() }
        try await server.shutdown()
    }
}
