import Foundation
import KindlingCore
import KindlingTesting
import Synchronization
import Testing

/// Kills the real server at random moments while its snapshots retire log segments into the
/// history (and purge it), restarts it, and checks that the history stayed whole: every write is
/// listed once, in sequence, and any listed instant can be read back.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct HistoryCrashTests {
    static let admin = [("Authorization", "Bearer owner")]

    @Test func killedWhileRetiringTheHistoryStaysWhole() async throws {
        let directory = NSTemporaryDirectory() + "kindling-history-crash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A snapshot (and so a retirement) every megabyte: 16 KB values make one every ~60 writes.
        let filler = String(repeating: "h", count: 16_000)
        var acknowledged: [Int: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        var next = 0
        for round in 0..<8 {
            let server = try await ServerProcess.start(dataDirectory: directory, arguments: ["--snapshot-mb", "1", "--history", "1d"])
            try await Self.verify(port: server.port, acknowledged: acknowledged, round: round)
            let http = try await TestHTTPConnection.connect(port: server.port)
            // The kill lands after a random number of acknowledged writes (an event), before,
            // during or after the retirements the writes cause; the writer runs until it.
            let target = Int.random(in: 10...150, using: &generator)
            let count = Mutex(0)
            let start = next
            let writer = Task { () -> [Int: Int] in
                var done: [Int: Int] = [:]
                var value = start
                while true {
                    value += 1
                    let key = value % 40
                    guard let response = try? await http.request("PUT", "/w/k\(key).json?ns=crash", body: "\"\(value) \(filler)\""),
                        response.status == 200
                    else { break }
                    done[key] = value
                    count.withLock { $0 += 1 }
                }
                return done
            }
            #expect(try await eventually(within: .seconds(60)) { count.withLock { $0 } >= target }, "round \(round)")
            await server.kill()
            for (key, value) in await writer.value { acknowledged[key] = value }
            http.close()
            next += 1_000_000
        }
        let server = try await ServerProcess.start(dataDirectory: directory, arguments: ["--history", "1d", "--log-level", "info"])
        try await Self.verify(port: server.port, acknowledged: acknowledged, round: 8)
        // However few writes a loaded machine let the rounds make, one more and a requested
        // snapshot retire a segment: the snapshot is logged once its retirement is done.
        #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/w/last.json?ns=crash", body: "1").status == 200)
        let requested = try await SnapshotRequestTests.requestSnapshot(directory)
        #expect(requested.status == 0, "\(requested.output)")
        #expect(try await server.waitForLog(containing: "wrote snapshot"))
        let folder = directory + "/crash/history"
        // Kept segments, compressed or (until the log is quiet for a while) plain.
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { $0.hasPrefix("log-") })
        await server.kill()
    }

    /// Every acknowledged value is stored; the listed writes are numbered 1, 2, 3, … with none
    /// missing or twice; the data as of the last listed write is the data now, and an earlier
    /// listed instant reads back without error.
    static func verify(port: Int, acknowledged: [Int: Int], round: Int) async throws {
        let http = try await TestHTTPConnection.connect(port: port)
        defer { http.close() }
        let now = try await http.request("GET", "/w.json?ns=crash").json()
        for (key, value) in acknowledged {
            let stored = now["k\(key)"]?.stringValue?.split(separator: " ").first.flatMap { Int($0) }
            #expect(stored.map { $0 >= value } == true, "round \(round): k\(key) acknowledged \(value), stored \(String(describing: stored))")
        }
        guard !acknowledged.isEmpty else { return }
        let listed = try await http.request("GET", "/w.json?ns=crash&changes=true&limit=10000", headers: admin).json()
        guard case .array(let changes) = listed, let last = changes.last else {
            Issue.record("round \(round): no changes listed")
            return
        }
        let sequences = changes.compactMap { $0["sequence"]?.numberValue.map { Int($0) } }
        #expect(sequences == Array(1...sequences.count), "round \(round): sequences \(sequences.prefix(5))…\(sequences.suffix(5))")
        let lastTime = try #require(last["time"]?.numberValue.map { Int64($0) })
        let asOfLast = try await http.request("GET", "/w.json?ns=crash&at=\(lastTime)", headers: admin)
        #expect(asOfLast.status == 200)
        #expect(try asOfLast.json() == now, "round \(round)")
        let middle = changes[changes.count / 2]
        let middleTime = try #require(middle["time"]?.numberValue.map { Int64($0) })
        #expect(try await http.request("GET", "/w.json?ns=crash&at=\(middleTime)", headers: admin).status == 200, "round \(round)")
    }
}
