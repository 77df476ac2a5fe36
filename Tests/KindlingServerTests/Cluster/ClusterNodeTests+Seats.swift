import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import NATSTesting
import Testing

/// The seats scenario spread over three nodes: buyers on every node take seats with REST
/// compare-and-set (ETag, if-match) until none are left. No update may be lost, the count may
/// never go below zero, and exactly as many purchases commit as there were seats.
/// (An extension, so these run in the serialized suite: one NATS cluster at a time.)
extension ClusterNodeTests {
    @Test func buyersOnThreeNodesTakeExactlyTheSeatsThereAre() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                let seats = 15
                #expect(
                    try await TestHTTPConnection.request(port: one.port, "PUT", "/show.json?ns=seats", body: #"{"left":\#(seats)}"#).status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    try await KindlingServer.run(Self.configuration(nats, node: "three")) { three in
                        let ports = [one.port, two.port, three.port]
                        let started = ContinuousClock.now
                        // Two buyers per node, each buying until it sees no seat left.
                        let bought = try await withThrowingTaskGroup(of: [Int].self) { group in
                            for port in ports + ports {
                                group.addTask { try await Self.buySeats(port: port) }
                            }
                            var all: [Int] = []
                            for try await taken in group { all += taken }
                            return all
                        }
                        print("seats over three nodes: \(bought.count) purchases of \(seats) seats in \(ContinuousClock.now - started)")
                        #expect(bought.count == seats)
                        // Each purchase took a different seat: the value each buyer left behind.
                        #expect(Set(bought) == Set(0..<seats))
                        for port in ports {
                            let left = try await TestHTTPConnection.request(port: port, "GET", "/show/left.json?ns=seats")
                            #expect(left.text == "0", "node on port \(port)")
                        }
                    }
                }
            }
        }
    }

    /// Takes seats from `/show/left` with compare-and-set until it reads 0, retrying on 412
    /// with the value and ETag the refusal returns; returns the count each purchase left behind.
    /// A value below zero, or an answer other than 200 and 412, fails the test.
    static func buySeats(port: Int) async throws -> [Int] {
        let http = try await TestHTTPConnection.connect(port: port)
        defer { http.close() }
        var response = try await http.request("GET", "/show/left.json?ns=seats", headers: [("X-Firebase-ETag", "true")])
        var taken: [Int] = []
        for _ in 0..<500 {
            let left = try #require(Int(response.text), "\(response.status): \(response.text)")
            #expect(left >= 0)
            guard left > 0 else { break }
            let etag = response.header("etag") ?? ""
            let put = try await http.request("PUT", "/show/left.json?ns=seats", headers: [("if-match", etag)], body: "\(left - 1)")
            switch put.status {
            case 200:
                taken.append(left - 1)
                response = try await http.request("GET", "/show/left.json?ns=seats", headers: [("X-Firebase-ETag", "true")])
            case 412:
                response = put
            default:
                Issue.record("a purchase answered \(put.status): \(put.text)")
                return taken
            }
        }
        return taken
    }

    /// The same scenario as the SDKs run it: realtime transactions. Each buyer listens to the
    /// count and sends a set carrying the hash of the value it holds; a stale hash is refused
    /// (`datastale`) and the buyer tries again with the value its listen brings.
    @Test func realtimeTransactionsOnThreeNodesTakeExactlyTheSeatsThereAre() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                let seats = 15
                #expect(
                    try await TestHTTPConnection.request(port: one.port, "PUT", "/show.json?ns=rtseats", body: #"{"left":\#(seats)}"#).status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    try await KindlingServer.run(Self.configuration(nats, node: "three")) { three in
                        let ports = [one.port, two.port, three.port]
                        let bought = try await withThrowingTaskGroup(of: [Int].self) { group in
                            for port in ports + ports {
                                group.addTask { try await Self.buySeatsInTransactions(port: port) }
                            }
                            var all: [Int] = []
                            for try await taken in group { all += taken }
                            return all
                        }
                        #expect(bought.count == seats)
                        #expect(Set(bought) == Set(0..<seats))
                        for port in ports {
                            try #require(
                                try await eventually(within: .seconds(5)) {
                                    try await TestHTTPConnection.request(port: port, "GET", "/show/left.json?ns=rtseats").text == "0"
                                }, "not within 5 s")
                        }
                    }
                }
            }
        }
    }

    /// Takes seats from `/show/left` with realtime transactions until its listen shows 0;
    /// returns the count each purchase left behind. A count below zero fails the test.
    static func buySeatsInTransactions(port: Int) async throws -> [Int] {
        let client = try await TestClient.connect(port: port, namespace: "rtseats")
        var current: JSONValue = .null
        func read(_ messages: [JSONValue]) {
            for message in messages where message["d"]?["a"]?.stringValue == "d" && message["d"]?["b"]?["p"]?.stringValue == "show/left" {
                current = message["d"]?["b"]?["d"] ?? .null
            }
        }
        read(try await client.request("q", try JSONParser.parse(#"{"p":"/show/left","h":""}"#)))
        var taken: [Int] = []
        for _ in 0..<2_000 {
            let left = try #require(current.numberValue.map { Int($0) }, "\(current)")
            #expect(left >= 0)
            guard left > 0 else { break }
            let hash = try Node(json: current, at: .root).hash
            let body = JSONValue.object([
                JSONMember("p", .string("/show/left")), JSONMember("d", .number(Double(left - 1))), JSONMember("h", .string(hash)),
            ])
            let replies = try await client.request("p", body)
            read(replies)
            switch replies.last?["d"]?["b"]?["s"]?.stringValue {
            case "ok":
                taken.append(left - 1)
            case "datastale":
                // The newer count is on its way through the listen.
                if current == .number(Double(left)), let next = try? await client.nextMessage(timeout: .milliseconds(500)) { read([next]) }
            default:
                Issue.record("a transaction answered \(replies.last.map { "\($0)" } ?? "nothing")")
                await client.close()
                return taken
            }
        }
        await client.close()
        return taken
    }
}
