import Foundation
import KindlingServer
import KindlingTesting
import NATSClient
import NATSTesting
import Testing

/// A leader paused past its lease with no other node to take over (a stop of the process, a
/// machine that stalls): NATS lets the key expire, so the renewal it sends when it wakes is
/// refused for an empty key ("wrong last sequence: 0"), which names no later holder. It must take
/// the lease back and answer writes again, rather than retry that renewal forever and hold every
/// write. (An extension, so it runs in the serialized suite.)
extension ClusterFaultTests {
    @Test func aLeaderPausedPastItsLeaseWithNobodyToTakeOverLeadsAgainWhenItWakes() async throws {
        try await Self.withNATS { nats in
            let directory = ClusterScratchDirectory()
            let leader = try await Self.startNodeProcess(nats, node: "sleeper", dataDirectory: directory)
            let first = try await TestHTTPConnection.request(port: leader.port, "PUT", "/v.json?ns=asleep", body: "1")
            #expect(first.status == 200, "\(first.status) \(first.text)")
            let (client, js) = try await Self.jetStream(nats)
            let leases = try await Self.leases(js)
            let holder = { try await Self.leaseHolder(leases, of: "asleep") }
            #expect(try await holder() == "sleeper")
            await leader.freeze()
            // The key expires a lease time (1 s) after the last renewal.
            #expect(try await eventually(within: .seconds(20), every: .milliseconds(100)) { try await holder() == nil })
            leader.thaw()
            let woke = ContinuousClock.now
            // Its renewals take the key back without a write to prompt them. The refusal of the
            // first renewal after waking, which names no message, is only believed after the
            // JetStream timeout (5 s: it could be a stale stream leader's), so 20 s.
            let retaken = try await eventually(within: .seconds(20), every: .milliseconds(50)) { try await holder() == "sleeper" }
            let took = ContinuousClock.now - woke
            #expect(retaken, "the key was not taken back within 20 s of waking; \(leader.errorOutput.suffix(2000))")
            // So the first write after it is answered, as any write to a node that leads, and read.
            let second = try await TestHTTPConnection.request(port: leader.port, "PUT", "/v.json?ns=asleep", body: "2")
            #expect(second.status == 200, "\(second.status) \(second.text)")
            #expect(try await TestHTTPConnection.request(port: leader.port, "GET", "/v.json?ns=asleep").text == "2")
            print("paused past its lease: the leader took its key back \(took) after it woke (lease 1 s)")
            await client.close()
            await leader.kill()
        }
    }
}
