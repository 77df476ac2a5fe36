import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// Security rules enforced on every path a request can take, over real sockets, with rules
/// written for the seed apps: admin-only registration once users exist, students writing only
/// their own activities, seat counts kept between 0 and the seats, a slot booked only while free,
/// and chat messages readable only through a query for one's own.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RulesEnforcementTests {
    static let appRules = """
        {
          // Comments and multi-line strings, as rules files have them.
          "rules": {
            "users": {
              ".read": "auth != null",
              /* the first user registers freely; after that only admins add users */
              ".write": "auth != null && (!data.exists() || auth.token.admin === true)",
              "$uid": { ".validate": "newData.hasChildren(['name'])" }
            },
            "activities": {
              "$uid": {
                ".read": "auth != null && auth.uid === $uid",
                ".write": "auth != null && auth.uid === $uid"
              }
            },
            "spots": {
              "$spot": {
                ".read": true,
                "free": {
                  ".write": "auth != null",
                  ".validate": "newData.isNumber() && newData.val() >= 0
                                && newData.val() <= root.child('spots').child($spot).child('seats').val()"
                }
              }
            },
            "slots": {
              "$slot": {
                ".read": true,
                ".write": "auth != null && (!data.exists() || (!newData.exists() && data.val() === auth.uid))",
                ".validate": "newData.val() === auth.uid"
              }
            },
            "chats": {
              ".read": "auth != null && query.orderByChild === 'to' && query.equalTo === auth.uid",
              "$message": {
                ".write": "auth != null && !data.exists() && newData.child('from').val() === auth.uid"
              }
            }
          }
        }
        """

    /// An unsigned token, as `connectDatabaseEmulator(db, host, port, {mockUserToken})` sends.
    static func unsignedToken(_ uid: String, claims: [JSONMember] = []) -> String {
        let header = base64URL(#"{"alg":"none","type":"JWT"}"#)
        let payload = JSONWriter.string(
            .object(
                [
                    JSONMember("iss", .string("https://securetoken.google.com/demo")), JSONMember("aud", .string("demo")),
                    JSONMember("iat", .number(0)), JSONMember("exp", .number(3600)), JSONMember("auth_time", .number(0)),
                    JSONMember("sub", .string(uid)), JSONMember("user_id", .string(uid)),
                    JSONMember("firebase", .object([JSONMember("sign_in_provider", .string("custom")), JSONMember("identities", .object([]))])),
                ] + claims))
        return header + "." + base64URL(payload) + "."
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func withServer(rules: String? = appRules, storage: String? = nil, _ body: (KindlingServer) async throws -> Void) async throws {
        try await KindlingTesting.withServer(
            { configuration in
                configuration.eventStreamKeepAlive = .milliseconds(200)
                configuration.rules = try rules.map { try RulesDocument.parse($0) }
                configuration.storage = storage.map { StorageConfiguration(directory: $0) }
            }, body)
    }

    static func status(_ reply: [JSONValue]) -> String? { reply.last?["d"]?["b"]?["s"]?.stringValue }

    static func body(_ pairs: (String, JSONValue)...) -> JSONValue { .object(pairs.map { JSONMember($0.0, $0.1) }) }

    static func signIn(_ client: TestClient, as uid: String, claims: [JSONMember] = []) async throws {
        #expect(status(try await client.request("auth", body(("cred", .string(unsignedToken(uid, claims: claims)))))) == "ok")
    }

    static func restAuth(_ uid: String) -> String {
        "auth=" + (unsignedToken(uid).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    }

    @Test func listensAndGetsNeedARuleThatGrantsAtOrAboveThePath() async throws {
        try await Self.withServer { server in
            let alice = try await TestClient.connect(port: server.port, namespace: "app")
            let anonymous = try await TestClient.connect(port: server.port, namespace: "app")
            defer {
                Task {
                    await alice.close(); await anonymous.close()
                }
            }
            try await Self.signIn(alice, as: "alice")
            #expect(Self.status(try await alice.request("p", Self.body(("p", .string("/activities/alice/a1")), ("d", .string("swim"))))) == "ok")
            let denied = try await anonymous.request("q", Self.body(("p", .string("/activities/alice")), ("h", .string(""))))
            #expect(Self.status(denied) == "permission_denied")
            #expect(denied.count == 1, "no data goes out before a denied listen's answer")
            let get = try await anonymous.request("g", Self.body(("p", .string("/activities/alice")), ("q", .object([]))))
            #expect(Self.status(get) == "permission_denied")
            #expect(get.last?["d"]?["b"]?["d"]?.stringValue == "Permission denied")
            // Rules are not filters: /activities has no grant even though alice's child does.
            #expect(Self.status(try await alice.request("q", Self.body(("p", .string("/activities")), ("h", .string(""))))) == "permission_denied")
            let allowed = try await alice.request("q", Self.body(("p", .string("/activities/alice")), ("h", .string(""))))
            #expect(Self.status(allowed) == "ok")
            #expect(allowed.first?["d"]?["b"]?["d"]?["a1"]?.stringValue == "swim")
        }
    }

    @Test func deniedWritesChangeNothingAndReachNoListener() async throws {
        try await Self.withServer { server in
            let alice = try await TestClient.connect(port: server.port, namespace: "app")
            let bob = try await TestClient.connect(port: server.port, namespace: "app")
            defer {
                Task {
                    await alice.close(); await bob.close()
                }
            }
            try await Self.signIn(alice, as: "alice")
            try await Self.signIn(bob, as: "bob")
            _ = try await alice.request("q", Self.body(("p", .string("/activities/alice")), ("h", .string(""))))
            let write = try await bob.request("p", Self.body(("p", .string("/activities/alice/x")), ("d", .number(1))))
            #expect(Self.status(write) == "permission_denied")
            #expect(write.last?["d"]?["b"]?["d"]?.stringValue == "Permission denied")
            #expect(await alice.isQuiet(), "a denied write reached a listener")
            // A multi-path update is one decision: one denied path refuses all of it.
            let update = try await bob.request(
                "m", Self.body(("p", .string("/activities")), ("d", Self.body(("bob/x", .number(1)), ("alice/x", .number(1))))))
            #expect(Self.status(update) == "permission_denied")
            let check = try await bob.request("g", Self.body(("p", .string("/activities/bob")), ("q", .object([]))))
            #expect(check.last?["d"]?["b"]?["d"]?.isNull == true)
            // An onDisconnect write that would be denied is refused when it is queued.
            #expect(
                Self.status(try await bob.request("o", Self.body(("p", .string("/activities/alice/y")), ("d", .number(1))))) == "permission_denied")
            #expect(Self.status(try await bob.request("o", Self.body(("p", .string("/activities/bob/y")), ("d", .number(1))))) == "ok")
        }
    }

    /// A study spot `lib` with two seats, `free` of them free (set by the owner), and student
    /// `s1` signed in on a realtime connection.
    static func studentAtSpot(_ server: KindlingServer, free: Int) async throws -> TestClient {
        let admin = try await TestHTTPConnection.request(
            port: server.port, "PUT", "/spots/lib.json?ns=app", headers: [("Authorization", "Bearer owner")], body: #"{"seats":2,"free":\#(free)}"#)
        #expect(admin.status == 200)
        let student = try await TestClient.connect(port: server.port, namespace: "app")
        try await Self.signIn(student, as: "s1")
        return student
    }

    @Test func seatCountsStayBetweenZeroAndTheSeats() async throws {
        try await Self.withServer { server in
            let student = try await Self.studentAtSpot(server, free: 2)
            defer { Task { await student.close() } }
            for (value, expected) in [(1.0, "ok"), (0, "ok"), (-1, "permission_denied"), (3, "permission_denied"), (2, "ok")] {
                let reply = try await student.request("p", Self.body(("p", .string("/spots/lib/free")), ("d", .number(value))))
                #expect(Self.status(reply) == expected, "free = \(value)")
            }
            #expect(
                Self.status(try await student.request("p", Self.body(("p", .string("/spots/lib/seats")), ("d", .number(9))))) == "permission_denied")
        }
    }

    /// A transaction run on stale data may compute a value the rules refuse; told `datastale`, the
    /// SDK reruns it on the current data. A caller who may not read the location learns nothing
    /// about its data from a hash: its transactions are refused, whatever their hash.
    @Test func aStaleTransactionIsToldSoBeforeItsDataIsJudgedWhenTheCallerMayRead() async throws {
        try await Self.withServer { server in
            let student = try await Self.studentAtSpot(server, free: 0)
            defer { Task { await student.close() } }
            let stale = try await student.request("p", Self.body(("p", .string("/spots/lib/free")), ("d", .number(-1)), ("h", .string("stale"))))
            #expect(Self.status(stale) == "datastale")
            let invalid = try await student.request(
                "p", Self.body(("p", .string("/spots/lib/free")), ("d", .object([JSONMember("a.b", .number(1))])), ("h", .string("stale"))))
            #expect(Self.status(invalid) == "datastale")
            let current = try await student.request(
                "p", Self.body(("p", .string("/spots/lib/free")), ("d", .number(-1)), ("h", .string(Node(.number(0)).hash))))
            #expect(Self.status(current) == "permission_denied")
            let unreadable = try await student.request(
                "p", Self.body(("p", .string("/activities/bob/x")), ("d", .number(1)), ("h", .string("stale"))))
            #expect(Self.status(unreadable) == "permission_denied")
            // s1 may write a new chat message but not read one: right and wrong guesses of the
            // data (here: that there is none) are refused alike, and nothing is written.
            let message = JSONValue.object([JSONMember("from", .string("s1"))])
            for guess in ["", "stale"] {
                let reply = try await student.request("p", Self.body(("p", .string("/chats/m1")), ("d", message), ("h", .string(guess))))
                #expect(Self.status(reply) == "permission_denied", "guess \(guess)")
            }
            #expect(Self.status(try await student.request("p", Self.body(("p", .string("/chats/m1")), ("d", message)))) == "ok")
        }
    }

    @Test func aSlotIsBookedOnlyWhileFree() async throws {
        try await Self.withServer { server in
            let port = server.port
            func book(_ uid: String, _ value: String, method: String = "PUT") async throws -> Int {
                try await TestHTTPConnection.request(port: port, method, "/slots/mon9.json?ns=app&\(Self.restAuth(uid))", body: value).status
            }
            #expect(try await book("alice", #""alice""#) == 200)
            #expect(try await book("bob", #""bob""#) == 401)
            #expect(try await book("bob", "", method: "DELETE") == 401)
            let denied = try await TestHTTPConnection.request(port: port, "PUT", "/slots/mon9.json?ns=app&\(Self.restAuth("bob"))", body: #""bob""#)
            #expect(denied.text == #"{"error":"Permission denied"}"#)
            #expect(try await book("alice", "", method: "DELETE") == 200)
            #expect(try await book("bob", #""bob""#) == 200)
            #expect(try await book("carol", #""bob""#) == 401, "validate: the booking must name the booker")
            let read = try await TestHTTPConnection.request(port: port, "GET", "/slots/mon9.json?ns=app")
            #expect(read.text == #""bob""#)
        }
    }

    @Test func usersAreRegisteredFreelyFirstThenOnlyByAdmins() async throws {
        try await Self.withServer { server in
            let port = server.port
            func register(_ uid: String, by token: String) async throws -> Int {
                let auth = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                return try await TestHTTPConnection.request(
                    port: port, "PATCH", "/users.json?ns=app&auth=\(auth)", body: "{\"\(uid)\":{\"name\":\"\(uid)\"}}"
                ).status
            }
            #expect(try await register("first", by: Self.unsignedToken("first")) == 200)
            #expect(try await register("second", by: Self.unsignedToken("second")) == 401)
            #expect(try await register("second", by: Self.unsignedToken("root", claims: [JSONMember("admin", .bool(true))])) == 200)
            let admin =
                Self.unsignedToken("root", claims: [JSONMember("admin", .bool(true))]).addingPercentEncoding(withAllowedCharacters: .alphanumerics)
                ?? ""
            let invalid = try await TestHTTPConnection.request(
                port: port, "PATCH", "/users.json?ns=app&auth=\(admin)", body: #"{"third":{"nick":"t"}}"#)
            #expect(invalid.status == 401, "validate: a user needs a name")
        }
    }

    @Test func chatMessagesAreReadOnlyThroughAQueryForOnesOwn() async throws {
        try await Self.withServer { server in
            let port = server.port
            for (id, from, to) in [("m1", "ann", "ben"), ("m2", "ben", "ann"), ("m3", "ann", "ben")] {
                let sent = try await TestHTTPConnection.request(
                    port: port, "PUT", "/chats/\(id).json?ns=app&\(Self.restAuth(from))",
                    body: "{\"from\":\"\(from)\",\"to\":\"\(to)\",\"text\":\"hi\"}")
                #expect(sent.status == 200)
            }
            let forged = try await TestHTTPConnection.request(
                port: port, "PUT", "/chats/m4.json?ns=app&\(Self.restAuth("ann"))", body: #"{"from":"ben","to":"ann"}"#)
            #expect(forged.status == 401)
            let query = "orderBy=%22to%22&equalTo=%22ben%22"
            let own = try await TestHTTPConnection.request(port: port, "GET", "/chats.json?ns=app&\(query)&\(Self.restAuth("ben"))")
            #expect(own.status == 200)
            #expect(try own.json()["m1"] != nil && own.json()["m3"] != nil && own.json()["m2"] == nil)
            let r1 = try await TestHTTPConnection.request(port: port, "GET", "/chats.json?ns=app&\(query)&\(Self.restAuth("ann"))")
            #expect(r1.status == 401)
            let r2 = try await TestHTTPConnection.request(port: port, "GET", "/chats.json?ns=app&\(Self.restAuth("ben"))")
            #expect(r2.status == 401)
            // The same over the socket: the listen's query is what the rule sees.
            let ben = try await TestClient.connect(port: port, namespace: "app")
            defer { Task { await ben.close() } }
            try await Self.signIn(ben, as: "ben")
            let wireQuery = Self.body(("i", .string("to")), ("sp", .string("ben")), ("ep", .string("ben")))
            #expect(
                Self.status(try await ben.request("q", Self.body(("p", .string("/chats")), ("q", wireQuery), ("t", .number(1)), ("h", .string("")))))
                    == "ok")
            #expect(Self.status(try await ben.request("q", Self.body(("p", .string("/chats")), ("h", .string(""))))) == "permission_denied")
        }
    }

    @Test func losingAccessCancelsListensAndStreams() async throws {
        try await Self.withServer { server in
            let port = server.port
            let alice = try await TestClient.connect(port: port, namespace: "app")
            defer { Task { await alice.close() } }
            try await Self.signIn(alice, as: "alice")
            let wireQuery = Self.body(("i", .string("to")), ("sp", .string("alice")), ("ep", .string("alice")))
            _ = try await alice.request("q", Self.body(("p", .string("/activities/alice")), ("h", .string(""))))
            _ = try await alice.request("q", Self.body(("p", .string("/chats")), ("q", wireQuery), ("t", .number(7)), ("h", .string(""))))
            // Signing out: both listens need auth, so both are revoked, each named as the client named it.
            let reply = try await alice.request("unauth", .object([]))
            let revoked = reply.filter { $0["d"]?["a"]?.stringValue == "c" }
            #expect(revoked.count == 2)
            #expect(revoked.contains { $0["d"]?["b"]?["p"]?.stringValue == "activities/alice" && $0["d"]?["b"]?["q"] == nil })
            #expect(revoked.contains { $0["d"]?["b"]?["p"]?.stringValue == "chats" && $0["d"]?["b"]?["q"] == .array([wireQuery]) })
            #expect(Self.status(reply) == "ok")

            // New rules that close /spots cancel a stream there with `cancel`.
            let stream = try await TestHTTPConnection.connect(port: port)
            defer { stream.close() }
            try await stream.send("GET", "/spots/lib.json?ns=app", headers: [("Accept", "text/event-stream")])
            #expect(try await stream.responseHead().status == 200)
            #expect(try await stream.nextEvent().event == "put")
            let closed = try await TestHTTPConnection.request(
                port: port, "PUT", "/.settings/rules.json?ns=app", headers: [("Authorization", "Bearer owner")],
                body: #"{"rules":{"spots":{".read":false}}}"#)
            #expect(closed.status == 200)
            var event = try await stream.nextEvent()
            while event.event == "keep-alive" { event = try await stream.nextEvent() }
            #expect(event.event == "cancel")
            #expect(await stream.waitForClose())
        }
    }

    @Test func streamsAndRESTAreRefusedWith401() async throws {
        try await Self.withServer { server in
            let stream = try await TestHTTPConnection.connect(port: server.port)
            defer { stream.close() }
            try await stream.send("GET", "/activities/alice.json?ns=app", headers: [("Accept", "text/event-stream")])
            let head = try await stream.responseHead()
            #expect(head.status == 401)
            let bad = try await TestHTTPConnection.request(port: server.port, "GET", "/activities/alice.json?ns=app&auth=not-a-token")
            #expect(bad.status == 401)
            let shallow = try await TestHTTPConnection.request(
                port: server.port, "GET", "/activities.json?ns=app&shallow=true&\(Self.restAuth("alice"))")
            #expect(shallow.status == 401)
        }
    }

    @Test func adminsBypassRulesAndOverridesApplyOnlyToAdmins() async throws {
        try await Self.withServer { server in
            let port = server.port
            let owner = [("Authorization", "Bearer owner")]
            let r3 = try await TestHTTPConnection.request(port: port, "PUT", "/activities/zed/a.json?ns=app", headers: owner, body: "1")
            #expect(r3.status == 200)
            let asZed = "auth_variable_override=" + (#"{"uid":"zed"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let r4 = try await TestHTTPConnection.request(port: port, "GET", "/activities/zed.json?ns=app&\(asZed)", headers: owner)
            #expect(r4.status == 200)
            let r5 = try await TestHTTPConnection.request(port: port, "GET", "/activities/amy.json?ns=app&\(asZed)", headers: owner)
            #expect(r5.status == 401)
            let asNobody = "auth_variable_override=null"
            let r6 = try await TestHTTPConnection.request(port: port, "GET", "/activities/zed.json?ns=app&\(asNobody)", headers: owner)
            #expect(r6.status == 401)
            // Not an admin: the override is ignored, so it grants nothing.
            let r7 = try await TestHTTPConnection.request(port: port, "GET", "/activities/zed.json?ns=app&\(asZed)")
            #expect(r7.status == 401)
        }
    }

    /// The realtime twin of REST's `auth_variable_override`: an object or null is an identity,
    /// anything else refuses the credential (it must not leave the admin acting as the admin).
    @Test func realtimeAuthOverridesActAsTheirIdentityAndOtherValuesAreRefused() async throws {
        try await Self.withServer { server in
            let owner = try await TestClient.connect(port: server.port, namespace: "app")
            defer { Task { await owner.close() } }
            let read = Self.body(("p", .string("/activities/zed")), ("q", .object([])))
            let asZed = try await owner.request(
                "auth", Self.body(("cred", .string("owner")), ("authvar", .object([JSONMember("uid", .string("zed"))]))))
            #expect(Self.status(asZed) == "ok")
            #expect(Self.status(try await owner.request("g", read)) == "ok")
            #expect(
                Self.status(try await owner.request("g", Self.body(("p", .string("/activities/amy")), ("q", .object([]))))) == "permission_denied")
            for nobody: [(String, JSONValue)] in [[("authvar", .null)], [("noauth", .bool(true))]] {
                let reply = try await owner.request("auth", .object(([("cred", .string("owner"))] + nobody).map { JSONMember($0.0, $0.1) }))
                #expect(Self.status(reply) == "ok")
                #expect(Self.status(try await owner.request("g", read)) == "permission_denied", "\(nobody) acts as nobody")
            }
            for bad: JSONValue in [5, "zed", [1], true] {
                let reply = try await owner.request("auth", Self.body(("cred", .string("owner")), ("authvar", bad)))
                #expect(Self.status(reply) == "invalid_token", "authvar \(bad)")
                #expect(Self.status(try await owner.request("g", read)) == "permission_denied", "authvar \(bad) grants nothing")
            }
        }
    }

    @Test func rulesAreSetReadAndKeptPerNamespace() async throws {
        let directory = NSTemporaryDirectory() + "kindling-rules-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let owner = [("Authorization", "Bearer owner")]
        let text = "{\n  // only reads\n  \"rules\": { \".read\": true }\n}"
        try await Self.withServer(rules: nil, storage: directory) { server in
            let port = server.port
            let r8 = try await TestHTTPConnection.request(port: port, "PUT", "/.settings/rules.json?ns=kept", body: text)
            #expect(r8.status == 401)
            let bad = try await TestHTTPConnection.request(
                port: port, "PUT", "/.settings/rules.json?ns=kept", headers: owner, body: "{\"rules\": {\".read\": \"nope ==\"}}")
            #expect(bad.status == 400)
            #expect(try bad.json()["error"]?.stringValue?.contains("line 1") == true)
            let r9 = try await TestHTTPConnection.request(port: port, "PUT", "/x.json?ns=kept", body: "1")
            #expect(r9.status == 200, "open until rules are set")
            let r10 = try await TestHTTPConnection.request(port: port, "PUT", "/.settings/rules.json?ns=kept", headers: owner, body: text)
            #expect(r10.status == 200)
            let r11 = try await TestHTTPConnection.request(port: port, "PUT", "/x.json?ns=kept", body: "2")
            #expect(r11.status == 401)
            let r12 = try await TestHTTPConnection.request(port: port, "PUT", "/x.json?ns=other", body: "2")
            #expect(r12.status == 200, "another namespace keeps its rules")
        }
        try await Self.withServer(rules: nil, storage: directory) { server in
            let got = try await TestHTTPConnection.request(port: server.port, "GET", "/.settings/rules.json?ns=kept", headers: owner)
            #expect(got.status == 200 && got.text == text)
            let r13 = try await TestHTTPConnection.request(port: server.port, "PUT", "/x.json?ns=kept", body: "3")
            #expect(r13.status == 401)
            let r14 = try await TestHTTPConnection.request(port: server.port, "GET", "/x.json?ns=kept")
            #expect(r14.text == "1")
        }
    }

    @Test func anOpenServerOnAPublicAddressRefusesToStart() async throws {
        var configuration = ServerConfiguration(host: "0.0.0.0", port: 0)
        var refusal: ProtectedMode.Refusal?
        do {
            let server = try await KindlingServer.start(configuration)
            try await server.shutdown()
        } catch let error as ProtectedMode.Refusal {
            refusal = error
        }
        #expect(refusal?.description.contains("--rules") == true)
        configuration.allowOpen = true
        let server = try await KindlingServer.start(configuration)
        try await server.shutdown()
    }
}
