import KindlingServer
import KindlingTesting
import Testing

/// A namespace's own rules in cluster mode: a change made on any node is a record of the
/// namespace's log, so every node enforces the same rules from the same point of the write
/// order, and a node that joins later reads them with the data.
extension ClusterNodeTests {
    static let admin = [("Authorization", "Bearer owner")]
    static let guarded = #"{"rules":{".read":true,"open":{".write":true},"closed":{".write":false}}}"#

    static func rules(_ port: Int, _ namespace: String) async throws -> TestHTTPResponse {
        try await TestHTTPConnection.request(port: port, "GET", "/.settings/rules.json?ns=\(namespace)", headers: admin)
    }

    @Test func rulesSetOnAFollowerAreInForceOnEveryNodeAndOnANodeThatJoinsLater() async throws {
        try await Self.withNATS { nats in
            try await KindlingServer.run(Self.configuration(nats, node: "one")) { one in
                #expect(try await TestHTTPConnection.request(port: one.port, "PUT", "/closed.json?ns=own", body: "1").status == 200)
                try await KindlingServer.run(Self.configuration(nats, node: "two")) { two in
                    try await KindlingServer.run(Self.configuration(nats, node: "three")) { three in
                        #expect(try await TestHTTPConnection.request(port: three.port, "GET", "/closed.json?ns=own").text == "1")
                        // Rules that do not load are refused where they are sent, and change nothing.
                        let broken = try await TestHTTPConnection.request(
                            port: two.port, "PUT", "/.settings/rules.json?ns=own", headers: Self.admin, body: #"{"rules":{".write":"auth !="}}"#)
                        #expect(broken.status == 400)
                        // Only an admin changes rules, on a follower as on the leader.
                        let anonymous = try await TestHTTPConnection.request(
                            port: two.port, "PUT", "/.settings/rules.json?ns=own", body: Self.guarded)
                        #expect(anonymous.status == 401)
                        #expect(try await TestHTTPConnection.request(port: three.port, "PUT", "/closed.json?ns=own", body: "2").status == 200)

                        let set = try await TestHTTPConnection.request(
                            port: two.port, "PUT", "/.settings/rules.json?ns=own", headers: Self.admin, body: Self.guarded)
                        #expect(set.status == 200, "\(set.text)")
                        // In force on the node that set them as soon as it answered, and on the
                        // others once they have read the record.
                        #expect(try await Self.rules(two.port, "own").text == Self.guarded)
                        #expect(try await TestHTTPConnection.request(port: two.port, "PUT", "/closed.json?ns=own", body: "3").status == 401)
                        for port in [one.port, three.port] {
                            try #require(
                                try await eventually(within: .seconds(5)) { try await Self.rules(port, "own").text == Self.guarded }, "not within 5 s"
                            )
                            #expect(try await TestHTTPConnection.request(port: port, "PUT", "/closed.json?ns=own", body: "4").status == 401)
                            #expect(try await TestHTTPConnection.request(port: port, "PUT", "/open.json?ns=own", body: "\(port)").status == 200)
                        }
                        // The leader's own change, back to open rules.
                        let reopened = try await TestHTTPConnection.request(
                            port: one.port, "PUT", "/.settings/rules.json?ns=own", headers: Self.admin,
                            body: #"{"rules":{".read":true,".write":true}}"#)
                        #expect(reopened.status == 200)
                        try #require(
                            try await eventually(within: .seconds(5)) {
                                try await TestHTTPConnection.request(port: three.port, "PUT", "/closed.json?ns=own", body: "5").status == 200
                            }, "not within 5 s")
                    }
                }
                // A node that joins now reads the data and both changes, in their order.
                try await KindlingServer.run(Self.configuration(nats, node: "four")) { four in
                    let rules = try await Self.rules(four.port, "own")
                    #expect(rules.text == #"{"rules":{".read":true,".write":true}}"#)
                    let closed = try await TestHTTPConnection.request(port: four.port, "GET", "/closed.json?ns=own")
                    #expect(closed.text == "5")
                }
            }
        }
    }
}
