import Dispatch
import KindlingCore
@testable import KindlingServer
import KindlingTesting
import NIOPosix
import Prometheus
import Synchronization
import Testing

/// A big REST response is rendered off the event loop: a small request to another namespace,
/// on the same (single) event loop, is answered while the big one renders, or waits for a
/// render thread.
@Suite(.timeLimit(.minutes(2)))
struct OffLoopTests {
    /// The server's render threads are held busy by the test until the small answer came, so
    /// the big response cannot be done first however the machine schedules: rendered on the
    /// event loop instead (the defect this guards against), it would come first, the loop
    /// busy with it when the small request arrives.
    @Test func aSmallRequestIsAnsweredWhileABigResponseRenders() async throws {
        try await HardeningServer.with({ $0.eventLoopThreads = 1 }) { server, _ in
            let children = (0..<300_000).map { "\"k\($0)\":\"\(String(repeating: "v", count: 80))\"" }
            let big = "{" + children.joined(separator: ",") + "}"
            let put = try await TestHTTPConnection.request(port: server.port, "PUT", "/big.json?ns=t&print=silent", body: big, timeout: .seconds(60))
            #expect(put.status == 204)
            let held = try await RenderThreads.hold(server.workers)
            let order = Mutex<[String]>([])
            let bigReader = try await TestHTTPConnection.connect(port: server.port)
            let smallReader = try await TestHTTPConnection.connect(port: server.port)
            defer {
                held.release()
                bigReader.close()
                smallReader.close()
            }
            let readsBefore = try Self.readsDecided(server)
            try await bigReader.send("GET", "/big.json?ns=t")
            async let bigDone: Void = {
                let head = try await bigReader.responseHead(timeout: .seconds(60))
                order.withLock { $0.append("big \(head.status)") }
            }()
            // The small request goes once the big read has been decided (counted).
            #expect(try await eventually { try Self.readsDecided(server) > readsBefore })
            let small = try await smallReader.request("GET", "/other.json?ns=u", timeout: .seconds(60))
            order.withLock { $0.append("small \(small.status)") }
            held.release()
            try await bigDone
            let seen = order.withLock { $0 }
            #expect(seen == ["small 200", "big 200"])
        }
    }

    /// The REST reads `server` decided so far, read in this process: `/.metrics` renders on the
    /// threads the test holds.
    static func readsDecided(_ server: KindlingServer) throws -> Double {
        let text = server.registry.metrics?.registry.emitToString() ?? ""
        return try PrometheusText(text).value("kindling_requests_total", ["action": "rest_read", "outcome": "ok"]) ?? 0
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

/// A server's render threads, each kept busy by a blocking wait until `release`.
final class RenderThreads: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    private let count: Int
    private let released = Atomic<Bool>(false)

    private init(count: Int) { self.count = count }

    /// Holds every thread of `workers` (two), returning once each is held.
    static func hold(_ workers: NIOThreadPool, threads: Int = 2) async throws -> RenderThreads {
        let held = RenderThreads(count: threads)
        let (started, starting) = AsyncStream.makeStream(of: Void.self)
        for _ in 0..<threads {
            workers.submit { _ in
                starting.yield()
                held.gate.wait()
            }
        }
        var iterator = started.makeAsyncIterator()
        for _ in 0..<threads { await iterator.next() }
        return held
    }

    /// Lets the threads go (once; later calls do nothing).
    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for _ in 0..<count { gate.signal() }
    }
}
