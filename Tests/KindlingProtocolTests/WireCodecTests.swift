import KindlingCore
import Testing

@testable import KindlingProtocol

/// The protocol both ways: what a client encodes, a server decodes to the same message, and what
/// a server writes, a client decodes, with every number from the wire range-checked.
struct WireCodecTests {
    static let path = Path(keys: ["rooms", "a"])

    static let actions: [Action] = [
        .auth(AuthRequest(isGoogleToken: false, credential: "a.b.c")),
        .auth(AuthRequest(isGoogleToken: true, credential: "owner", authOverride: ["uid": "x"], noAuth: true)),
        .unauth,
        .appCheck("token"),
        .unappCheck,
        .listen(ListenRequest(path: path, query: .all, tag: nil, hash: "")),
        .listen(ListenRequest(path: path, query: Query(index: .key, limit: QueryLimit(count: 2, fromEnd: true)), tag: 3, hash: "h")),
        .unlisten(path: path, query: .all),
        .put(path: path, data: ["n": 1.5, "s": "é"], hash: nil),
        .put(path: path, data: nil, hash: "abc="),
        .merge(path: path, data: [JSONMember("x/y", 1), JSONMember("z", nil)]),
        .onDisconnectPut(path: path, data: true),
        .onDisconnectMerge(path: path, data: [JSONMember("a", 2)]),
        .onDisconnectCancel(path: path),
        .get(path: path, query: Query(index: .value)),
        .getInfo("/.info/serverTimeOffset"),
        .echo([1, "two"]),
        .unknown("weird"),
    ]

    @Test func everyClientMessageDecodesToItself() throws {
        #expect(try ClientMessage.decode(ClientMessage.ping.encoded) == .ping)
        #expect(try ClientMessage.decode(ClientMessage.otherControl("n").encoded) == .otherControl("n"))
        for (offset, action) in Self.actions.enumerated() {
            let message = ClientMessage.request(Request(number: offset, action: action))
            #expect(try ClientMessage.decode(message.encoded) == message, "\(message.encoded)")
        }
        let unnumbered = ClientMessage.request(Request(number: nil, action: .unappCheck))
        #expect(unnumbered.encoded == #"{"t":"d","d":{"a":"unappeck","b":{}}}"#)
    }

    @Test func aListenIsWrittenAsTheSDKsWriteIt() {
        let plain = ClientMessage.request(Request(number: 1, action: Self.actions[5]))
        #expect(plain.encoded == #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/rooms/a","h":""}}}"#)
        // No query object means none: not a JSON null.
        guard case .listen(let listen) = Self.actions[5] else {
            Issue.record("not a listen")
            return
        }
        #expect(listen.wireQuery == Optional<JSONValue>.none)
    }

    @Test func serverMessagesDecode() throws {
        let hello = ServerMessage.handshake(timestamp: 1_700_000_000_000, host: "localhost:9000", session: "s1")
        #expect(
            try ServerEnvelope.decode(String(decoding: hello, as: UTF8.self))
                == .handshake(ServerHandshake(timestamp: 1_700_000_000_000, version: "5", host: "localhost:9000", session: "s1")))
        #expect(try ServerEnvelope.decode(String(decoding: ServerMessage.pong, as: UTF8.self)) == .pong)
        let ok = ServerMessage.response(7, status: .ok)
        #expect(try ServerEnvelope.decode(String(decoding: ok, as: UTF8.self)) == .response(ServerResponse(number: 7, status: "ok", data: [:])))
        let denied = ServerMessage.failure(8, status: .permissionDenied, message: "no")
        #expect(
            try ServerEnvelope.decode(String(decoding: denied, as: UTF8.self))
                == .response(ServerResponse(number: 8, status: "permission_denied", data: "no")))
        let push = ServerMessage.push(merge: true, path: Self.path, data: Array(#"{"b/c":1}"#.utf8), tag: 4)
        #expect(
            try ServerEnvelope.decode(String(decoding: push, as: UTF8.self))
                == .push(.merge(path: Self.path, data: [JSONMember("b/c", 1)], tag: 4)))
        let revoked = ServerMessage.listenRevoked(path: Self.path, query: ["l": 1])
        #expect(try ServerEnvelope.decode(String(decoding: revoked, as: UTF8.self)) == .push(.listenRevoked(path: Self.path, query: [["l": 1]])))
        let auth = ServerMessage.authRevoked(status: "expired_token", reason: "late")
        #expect(try ServerEnvelope.decode(String(decoding: auth, as: UTF8.self)) == .push(.authRevoked(status: "expired_token", reason: "late")))
        #expect(try ServerEnvelope.decode(#"{"t":"d","d":{"a":"sd","b":{}}}"#) == .push(.unknown("sd")))
    }

    @Test(arguments: [
        #"{"t":"d","d":{"r":1e300,"b":{"s":"ok"}}}"#,
        #"{"t":"d","d":{"r":9007199254740992,"b":{"s":"ok"}}}"#,
        #"{"t":"d","d":{"r":0.5,"b":{"s":"ok"}}}"#,
        #"{"t":"d","d":{"r":1,"b":{"d":1}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a","d":1,"t":-1e20}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"d":1}}}"#,
        #"{"t":"d","d":{"a":"m","b":{"p":"/a","d":1}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a$","d":1}}}"#,
        #"{"t":"c","d":{"d":{}}}"#,
        #"{"t":"d","d":[]}"#,
        #"[1]"#,
    ])
    func unreadableServerMessagesAreErrorsNotTraps(text: String) {
        #expect(throws: ProtocolError.self) { try ServerEnvelope.decode(text) }
    }

    /// The `ok` response written from static text is the general response with `{}` for data,
    /// for numbers of every length and sign.
    @Test(arguments: [0, 7, 10, 99, 12_345, 999_999_999_999_999, Int.max, -1, Int.min])
    func theOKResponseIsTheGeneralOneWithEmptyData(number: Int) {
        let ok = ServerMessage.response(number, status: .ok)
        #expect(ok == ServerMessage.response(number, status: .ok, data: Array("{}".utf8)))
        #expect(ok.count <= ServerMessage.okResponseMaxCount)
        #expect(String(decoding: ok, as: UTF8.self) == #"{"t":"d","d":{"r":\#(number),"b":{"s":"ok","d":{}}}}"#)
    }

    @Test func theCodecWritesExactlyTheWireLiterals() {
        func starts(_ bytes: [UInt8], with parts: [UInt8]...) -> Bool { bytes.starts(with: parts.joined()) }
        let response = ServerMessage.response(12, status: .ok)
        #expect(starts(response, with: WireLiterals.numberedDataPrefix, Array("12".utf8), WireLiterals.responseStatusKey))
        let push = ServerMessage.push(merge: false, path: Self.path, data: Array("1".utf8), tag: nil)
        #expect(
            starts(
                push, with: WireLiterals.pushPrefix, Array("d\",".utf8), WireLiterals.pushPathKey, Array("rooms/a".utf8),
                WireLiterals.pushDataKey))
        let request = Array(ClientMessage.request(Request(number: 3, action: .unauth)).encoded.utf8)
        #expect(
            starts(
                request, with: WireLiterals.numberedDataPrefix, Array("3".utf8), WireLiterals.requestActionKey, Array("unauth".utf8),
                WireLiterals.requestBodyKey))
        #expect(starts(Array(ClientMessage.ping.encoded.utf8), with: WireLiterals.pingPrefix))
    }

    @Test func aMergeIsWrittenOneWay() throws {
        let entries = [
            MergeEntry(path: Path(keys: ["a", "b"]), node: Node(.number(1))),
            MergeEntry(path: Path(keys: ["c"]), node: try Node(json: ["d": true, ".priority": 2])),
        ]
        #expect(String(decoding: ServerMessage.mergeData(entries), as: UTF8.self) == #"{"a/b":1,"c":{"d":true,".priority":2}}"#)
        var plain = JSONWriter()
        plain.write(entries, format: .plain)
        #expect(plain.text == #"{"a/b":1,"c":{"d":true}}"#)
    }
}
