import KindlingCore
import KindlingServer
import KindlingTesting
import Synchronization
import Testing

/// A big REST response is rendered off the event loop: a small request to another namespace,
/// on the same (single) event loop, is answered while it renders.
@Suite(.timeLimit(.minutes(2)))
struct OffLoopTests {
    @Test func aSmallRequestIsAnsweredWhileABigResponseRenders() async throws {
        try await HardeningServer.with({ $0.eventLoopThreads = 1 }) { server, _ in
            let children = (0..<300_000).map { "\"k\($0)\":\"\(String(repeating: "v", count: 80))\"" }
            let big = "{" + children.joined(separator: ",") + "}"
            let put = try await TestHTTPConnection.request(port: server.port, "PUT", "/big.json?ns=t&print=silent", body: big, timeout: .seconds(60))
            #expect(put.status == 204)
            let order = Mutex<[String]>([])
            let bigReader = try await TestHTTPConnection.connect(port: server.port)
            let smallReader = try await TestHTTPConnection.connect(port: server.port)
            defer {
                bigReader.close()
                smallReader.close()
            }
            let readsBefore = try await PrometheusText.requests(port: server.port, "rest_read")
            try await bigReader.send("GET", "/big.json?ns=t")
            async let bigDone: Void = {
                let head = try await bigReader.responseHead(timeout: .seconds(60))
                order.withLock { $0.append("big \(head.status)") }
            }()
            // The small request goes once the big read has been decided (counted), so it renders now.
            #expect(try await eventually { try await PrometheusText.requests(port: server.port, "rest_read") > readsBefore })
            let small = try await smallReader.request("GET", "/other.json?ns=u", timeout: .seconds(60))
            order.withLock { $0.append("small \(small.status)") }
            try await bigDone
            let seen = order.withLock { $0 }
            #expect(seen.first == "small 200", "\(seen)")
            #expect(seen.count == 2)
        }
    }

    @Test func aBigBodyParsedOffTheLoopIsStoredWhole() async throws {
        try await HardeningServer.with({ $0.offLoopBytes = 1024 }) { server, _ in
            let value = "[" + (0..<2000).map(String.init).joined(separator: ",") + "]"
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/list.json?ns=t&print=silent", body: value).status == 204)
            #expect(try await TestHTTPConnection.request(port: server.port, "GET", "/list.json?ns=t").text == value)
            let bad = try await TestHTTPConnection.request(port: server.port, "PUT", "/list.json?ns=t", body: value + "]")
            #expect(bad.status == 400)
        }
    }
}
