import ArgumentParser
import Dispatch
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging

/// `kindling-bench fanout`: one writer, many subscribers on one path, over real sockets.
struct FanoutBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "One writer and N subscribers on one path: deliveries per second and write-to-delivery latency."
    )

    @Option(help: "Subscribers listening on the path.")
    var subscribers = 1000

    @Option(help: "Writes to send.")
    var writes = 2000

    @Option(help: "Writes in flight at once (the writer pipelines this many before waiting for acks).")
    var window = 20

    @Option(help: "Port of a running server; 0 starts one in this process.")
    var port = 0

    mutating func run() async throws {
        var server: KindlingServer?
        var target = port
        if port == 0 {
            var logger = Logger(label: "kindling-bench")
            logger.logLevel = .error
            let started = try await KindlingServer.start(ServerConfiguration(port: 0, logger: logger))
            server = started
            target = started.port
        }
        let namespace = "bench\(UInt32.random(in: 0...UInt32.max))"
        let path = "/fanout/value"
        var clients: [TestClient] = []
        for _ in 0..<subscribers {
            let client = try await TestClient.connect(port: target, namespace: namespace)
            _ = try await client.request("q", .object([JSONMember("p", .string(path)), JSONMember("h", .string(""))]))
            clients.append(client)
        }
        print("\(subscribers) subscribers listening on \(path)")
        let writer = try await TestClient.connect(port: target, namespace: namespace)
        let expected = writes
        let start = DispatchTime.now().uptimeNanoseconds
        let latencies = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for client in clients {
                group.addTask {
                    var seen: [UInt64] = []
                    seen.reserveCapacity(expected)
                    while seen.count < expected {
                        let message = try await client.nextMessage(timeout: .seconds(60))
                        guard let sent = message["d"]?["b"]?["d"]?["ts"]?.numberValue else { continue }
                        seen.append(DispatchTime.now().uptimeNanoseconds &- UInt64(sent))
                    }
                    return seen
                }
            }
            var sequence = 0
            while sequence < expected {
                let batch = min(window, expected - sequence)
                var numbers: [Int] = []
                for _ in 0..<batch {
                    sequence += 1
                    let value = JSONValue.object([
                        JSONMember("ts", .number(Double(DispatchTime.now().uptimeNanoseconds))),
                        JSONMember("seq", .number(Double(sequence))),
                    ])
                    numbers.append(try await writer.sendRequest("p", .object([JSONMember("p", .string(path)), JSONMember("d", value)])))
                }
                var acked = 0
                while acked < numbers.count {
                    let message = try await writer.nextMessage(timeout: .seconds(60))
                    if message["d"]?["r"] != nil { acked += 1 }
                }
            }
            var all: [UInt64] = []
            for try await part in group { all.append(contentsOf: part) }
            return all
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        print("\(writes) writes × \(subscribers) subscribers = \(latencies.count) deliveries in \((elapsed * 100).rounded() / 100) s")
        print("deliveries/s: \(Int(Double(latencies.count) / elapsed)); writes/s: \(Int(Double(writes) / elapsed))")
        print("write→delivery latency: \(latencySummary(latencies))")
        for client in clients { await client.abort() }
        await writer.abort()
        try await server?.shutdown()
    }
}
