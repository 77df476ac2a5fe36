import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import NATSTesting
import Testing

/// A leader that hangs (SIGSTOP of a real `kindling serve --cluster` process) while a follower
/// forwards it a write: the request times out, the follower takes the namespace over once the
/// lease lapses, and does not make the write itself, since a hung leader may have put it in the
/// log before it stopped. (An extension, so it runs in the serialized suite.)
extension ClusterNodeTests {
    @Test func aWriteForwardedToAHungLeaderIsAnsweredUnconfirmedAndNotMadeAgain() async throws {
        try await Self.withNATS { nats in
            let directory = ScratchDirectory()
            let leader = try await Self.startNodeProcess(nats, node: "hung", dataDirectory: directory)
            let opened = try await TestHTTPConnection.request(port: leader.port, "PUT", "/started.json?ns=hang", body: "true")
            #expect(opened.status == 200, "\(opened.text); \(leader.errorOutput)")
            try await KindlingServer.run(Self.configuration(nats, node: "heir", leaseTime: .seconds(1))) { heir in
                // While the leader answers, the follower's writes go to it.
                let forwarded = try await TestHTTPConnection.request(port: heir.port, "PUT", "/before.json?ns=hang", body: "1")
                #expect(forwarded.status == 200, "\(forwarded.status): \(forwarded.text)")
                await leader.freeze()
                let push = try await TestHTTPConnection.request(
                    port: heir.port, "POST", "/pushed.json?ns=hang", body: #""once""#, timeout: .seconds(20))
                #expect(push.status == 504, "\(push.status): \(push.text)")
                // The follower leads now: the write sent again is made, once.
                let again = try await TestHTTPConnection.request(
                    port: heir.port, "POST", "/pushed.json?ns=hang", body: #""once""#, timeout: .seconds(20))
                #expect(again.status == 200, "\(again.status): \(again.text)")
                let read = try await TestHTTPConnection.request(port: heir.port, "GET", "/pushed.json?ns=hang")
                guard case .object(let children) = try read.json() else {
                    Issue.record("no pushed children: \(read.text)")
                    return
                }
                #expect(children.count == 1)
                #expect(try await TestHTTPConnection.request(port: heir.port, "GET", "/before.json?ns=hang").json() == .number(1))
            }
        }
    }
}
