import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import NATSTesting
import Testing

/// A leader that hangs (SIGSTOP of a real `kindling serve --cluster` process) while a follower
/// forwards it a push: the request times out, the follower sends it again with its id and,
/// once the lease lapses, takes the namespace over and makes the push itself, which it may
/// since a hung leader's batch that was not in the log it read can never land after its own.
/// The client gets 200 and the push is stored once. (An extension, so it runs in the
/// serialized suite.)
extension ClusterFaultTests {
    @Test func aPushForwardedToAHungLeaderIsMadeOnceByTheNextLeader() async throws {
        try await Self.withNATS { nats in
            let directory = ClusterScratchDirectory()
            let leader = try await Self.startNodeProcess(nats, node: "hung", dataDirectory: directory)
            let opened = try await TestHTTPConnection.request(port: leader.port, "PUT", "/started.json?ns=hang", body: "true")
            #expect(opened.status == 200, "\(opened.text); \(leader.errorOutput)")
            try await KindlingServer.run(Self.configuration(nats, node: "heir", leaseTime: .seconds(1))) { heir in
                // While the leader answers, the follower's writes go to it.
                let forwarded = try await TestHTTPConnection.request(port: heir.port, "PUT", "/before.json?ns=hang", body: "1")
                #expect(forwarded.status == 200, "\(forwarded.status): \(forwarded.text)")
                await leader.freeze()
                let frozen = ContinuousClock.now
                let push = try await TestHTTPConnection.request(
                    port: heir.port, "POST", "/pushed.json?ns=hang", body: #""once""#, timeout: .seconds(30))
                let answered = ContinuousClock.now - frozen
                #expect(push.status == 200, "\(push.status): \(push.text)")
                let name = try push.json()["name"]?.stringValue
                let read = try await TestHTTPConnection.request(port: heir.port, "GET", "/pushed.json?ns=hang")
                guard case .object(let children) = try read.json() else {
                    Issue.record("no pushed children: \(read.text)")
                    return
                }
                #expect(children.map(\.key) == [name].compactMap { $0 }, "\(read.text)")
                #expect(try await TestHTTPConnection.request(port: heir.port, "GET", "/before.json?ns=hang").json() == .number(1))
                print("hung leader: the push forwarded to it was answered 200 after \(answered) (lease 1 s)")
            }
        }
    }
}
