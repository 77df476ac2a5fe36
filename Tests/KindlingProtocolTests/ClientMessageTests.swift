import KindlingCore
import Testing

@testable import KindlingProtocol

struct ClientMessageTests {
    func request(_ text: String) throws -> Request {
        guard case .request(let request) = try ClientMessage.decode(text) else { throw ProtocolError(.malformedMessage, "not a request") }
        return request
    }

    @Test func controlMessages() throws {
        #expect(try ClientMessage.decode(#"{"t":"c","d":{"t":"p","d":{}}}"#) == .ping)
        #expect(try ClientMessage.decode(#"{"t":"c","d":{"t":"n","d":{}}}"#) == .otherControl("n"))
    }

    @Test func everyActionDecodes() throws {
        #expect(try request(#"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"sdk.js.12-0-0":1}}}}"#) == Request(number: 1, action: .stats))
        let listen = try request(#"{"t":"d","d":{"r":4,"a":"q","b":{"p":"/t5","q":{"l":2,"vf":"r","i":"score"},"t":1,"h":""}}}"#)
        guard case .listen(let body) = listen.action else { Issue.record("not a listen"); return }
        #expect(body.path == (try Path("t5")))
        #expect(body.tag == 1)
        #expect(body.query.limit == QueryLimit(count: 2, fromEnd: true))
        let put = try request(#"{"t":"d","d":{"r":11,"a":"p","b":{"p":"/t4","d":11,"h":"+r5aI9HvKKagELki8SYKBk0q7D4="}}}"#)
        #expect(put.action == .put(path: try Path("t4"), data: .number(11), hash: "+r5aI9HvKKagELki8SYKBk0q7D4="))
        let merge = try request(#"{"t":"d","d":{"r":14,"a":"m","b":{"p":"/t5","d":{"b/score":1}}}}"#)
        #expect(merge.action == .merge(path: try Path("t5"), data: [JSONMember("b/score", .number(1))]))
        #expect(
            try request(#"{"t":"d","d":{"r":2,"a":"gauth","b":{"cred":"owner"}}}"#).action
                == .auth(AuthRequest(isGoogleToken: true, credential: "owner", authOverride: nil, noAuth: false)))
        #expect(try request(#"{"t":"d","d":{"a":"unappeck","b":{}}}"#) == Request(number: nil, action: .unappCheck))
        #expect(
            try request(#"{"t":"d","d":{"r":25,"a":"oc","b":{"p":"/t9/canceled","d":null}}}"#).action
                == .onDisconnectCancel(path: try Path("t9/canceled")))
        #expect(
            try request(#"{"t":"d","d":{"r":2,"a":"g","b":{"p":"/.info/serverTimeOffset","q":{}}}}"#).action == .getInfo("/.info/serverTimeOffset"))
        #expect(try request(#"{"t":"d","d":{"r":3,"a":"weird","b":{}}}"#).action == .unknown("weird"))
    }

    @Test func invalidBodiesKeepTheRequestNumber() {
        do {
            _ = try ClientMessage.decode(#"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/a.b","d":1}}}"#)
            Issue.record("accepted a bad path")
        } catch {
            #expect(error.requestNumber == 7)
            #expect(error.validation?.kind == .invalidKey)
            #expect(WireStatus(error.validation!) == .invalidPath)
        }
    }

    @Test(arguments: ["not json", "[1,2]", #"{"t":"d"}"#, #"{"d":{}}"#, #"{"t":"x","d":{}}"#, #"{"t":"d","d":{"r":"one","a":"s"}}"#])
    func malformedEnvelopes(text: String) {
        #expect(throws: ProtocolError.self) { try ClientMessage.decode(text) }
    }
}

struct FramingTests {
    @Test func keepalivesAndCountHeaders() throws {
        var assembler = FrameAssembler()
        #expect(try assembler.receive("0") == .nothing)
        #expect(try assembler.receive("3") == .nothing)
        #expect(try assembler.receive(#"{"t":"#) == .nothing)
        #expect(try assembler.receive(#""c","d":"#) == .nothing)
        #expect(try assembler.receive(#"{}}"#) == .message(#"{"t":"c","d":{}}"#))
        #expect(try assembler.receive(#"{"t":"c"}"#) == .message(#"{"t":"c"}"#))
    }

    /// The client's assembler refuses an oversized message at once (its connection closes).
    @Test func oversizeMessagesAreRefused() {
        var assembler = FrameAssembler(maxMessageBytes: 100)
        #expect(throws: ProtocolError.self) { try assembler.receive(String(repeating: "x", count: 101)) }
        var pieces = FrameAssembler(maxMessageBytes: 100)
        #expect(throws: ProtocolError.self) {
            _ = try pieces.receive("2")
            _ = try pieces.receive(String(repeating: "x", count: 60))
            _ = try pieces.receive(String(repeating: "x", count: 60))
        }
        var huge = FrameAssembler(maxMessageBytes: 100)
        #expect(throws: ProtocolError.self) { try huge.receive("999999") }
    }

    /// An oversized message is read to its last piece and then refused naming its request, so
    /// the client's write fails with `too_big` and the connection goes on in step.
    @Test func oversizeSplitMessagesAreReadToTheirEndAndNameTheirRequest() throws {
        let write = #"{"t":"d","d":{"r":42,"a":"p","b":{"p":"/x","d":""# + String(repeating: "y", count: 300) + #""}}}"#
        for count in [2, 9, 999_999] {
            var assembler = FrameAssembler(maxMessageBytes: 100, readsOversizedToTheEnd: true)
            #expect(try assembler.receive(String(count)) == .nothing)
            let piece = write.count / min(count, 9) + 1
            var rest = Substring(write)
            for index in 0..<count - 1 {
                let part = index < 9 ? rest.prefix(piece) : "z"
                rest = rest.dropFirst(part.count)
                #expect(try assembler.receive(String(part)) == .nothing, "piece \(index) of \(count)")
            }
            #expect(assembler.bufferedBytes == 0)
            do {
                _ = try assembler.receive(String(rest.isEmpty ? "z" : rest))
                Issue.record("not refused")
            } catch {
                #expect(error.kind == .tooLarge)
                #expect(error.requestNumber == 42)
            }
            // In step: the next message is read as usual.
            #expect(try assembler.receive(#"{"t":"c"}"#) == .message(#"{"t":"c"}"#))
        }
        var single = FrameAssembler(maxMessageBytes: 100, readsOversizedToTheEnd: true)
        #expect(throws: ProtocolError.self) { try single.receive(write) }
        do {
            _ = try single.receive(write)
        } catch {
            #expect(error.requestNumber == 42)
        }
        var unnamed = FrameAssembler(maxMessageBytes: 100, readsOversizedToTheEnd: true)
        _ = try unnamed.receive("2")
        _ = try unnamed.receive(String(repeating: "x", count: 60))
        do {
            _ = try unnamed.receive(String(repeating: "x", count: 60))
            Issue.record("not refused")
        } catch {
            #expect(error.requestNumber == nil)
        }
    }

    /// The request number is found in whatever order the SDK writes the envelope's members (JS
    /// `r, a, b`; Android `a, r, b`; iOS possibly `b` first), however the bytes are cut into
    /// pieces, and never taken from the data, a string, or a deeper object.
    @Test func theRequestNumberIsFoundInAnyOrderAndOnlyInTheEnvelope() {
        let body = #"{"p":"/x","d":{"r":5,"s":"\"r\":6","n":[{"r":8}]}}"#
        let cases: [(String, Int?)] = [
            (#"{"t":"d","d":{"r":42,"a":"p","b":"# + body + "}}", 42),
            (#"{"t":"d","d":{"a":"p","r":42,"b":"# + body + "}}", 42),
            (#"{"d":{"b":"# + body + #","a":"p","r":42},"t":"d"}"#, 42),
            (#"{ "t" : "d" , "d" : { "b" : "# + body + #" , "r" : 42 } }"#, 42),
            (#"{"t":"d","d":{"a":"p","b":"# + body + "}}", nil),
            (#"{"t":"d","d":{"r":"42","b":"# + body + "}}", nil),
            (#"{"t":"d","d":{"r":4.2,"b":"# + body + "}}", nil),
            (#"{"t":"d","d":{"r":-42,"b":"# + body + "}}", nil),
            (#"{"t":"d","d":{"r":9999999999999999,"b":"# + body + "}}", nil),
            (#"{"t":"d","x":{"r":42},"d":{"b":"# + body + "}}", nil),
            (#"{"t":"d","d":{"\u0072":42,"b":"# + body + "}}", nil),
        ]
        for (message, expected) in cases {
            let bytes = Array(message.utf8)
            var whole = RequestNumberScanner()
            whole.scan(bytes)
            #expect(whole.requestNumber == expected, "\(message)")
            for cut in stride(from: 1, to: bytes.count, by: 7) {
                var pieces = RequestNumberScanner()
                pieces.scan(bytes[..<cut])
                pieces.scan(bytes[cut...])
                #expect(pieces.requestNumber == expected, "\(message) cut at \(cut)")
            }
        }
    }

    @Test func splitterCutsOnCharacterBoundariesAndNeverSendsABareZero() {
        let message = Array(String(repeating: "é✓😀a", count: 9000).utf8)
        let frames = FrameSplitter.frames(message)
        #expect(Int(String(decoding: frames[0], as: UTF8.self)) == frames.count - 1)
        var rebuilt: [UInt8] = []
        for piece in frames.dropFirst() {
            #expect(piece.count <= FrameSplitter.pieceLimit)
            #expect(String(validating: Array(piece), as: UTF8.self) != nil)
            rebuilt.append(contentsOf: piece)
        }
        #expect(rebuilt == message)
        #expect(FrameSplitter.frames(Array("{}".utf8)).count == 1)
    }
}

struct ServerMessageTests {
    @Test func shapes() throws {
        #expect(
            String(decoding: ServerMessage.handshake(timestamp: 5, host: "localhost:9000", session: "s1"), as: UTF8.self)
                == #"{"t":"c","d":{"t":"h","d":{"ts":5,"v":"5","h":"localhost:9000","s":"s1"}}}"#)
        #expect(String(decoding: ServerMessage.response(3, status: .ok), as: UTF8.self) == #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{}}}}"#)
        #expect(
            String(decoding: ServerMessage.failure(4, status: .dataStale, message: "stale"), as: UTF8.self)
                == #"{"t":"d","d":{"r":4,"b":{"s":"datastale","d":"stale"}}}"#)
        let node = try Node(jsonText: #"{"a":{".value":1,".priority":2}}"#)
        #expect(
            String(decoding: ServerMessage.push(merge: false, path: try Path("x/y"), data: ServerMessage.data(node), tag: 7), as: UTF8.self)
                == #"{"t":"d","d":{"a":"d","b":{"p":"x/y","d":{"a":{".value":1,".priority":2}},"t":7}}}"#)
    }
}
