import Dispatch
import KindlingCore
import KindlingProtocol
import Testing

@testable import KindlingClient

/// Random and mutated server messages fed to the SDK's connection state machine: it must never
/// trap, and every message it cannot take must end in a clean disconnect (the socket closed with
/// a reason, the state back to waiting, a reconnect scheduled), after which it connects again.
struct ConnectionStateMachineFuzzTests {
    /// Messages a server sends, with the data an observer at `/rooms` sees.
    static let corpus: [String] = [
        #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":{}}}}"#,
        #"{"t":"d","d":{"r":2,"b":{"s":"permission_denied","d":"no"}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/rooms","d":{"a":{"n":1,".priority":2},"b":"x"}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/rooms/a/.priority","d":5}}}"#,
        #"{"t":"d","d":{"a":"m","b":{"p":"/rooms","d":{"a/n":2,"c":[1,2,{"z":null}]}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/rooms","d":{"q":1},"t":1}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/rooms","d":{"a":{"n":3},"b":{"n":1},"c":{"n":2}},"t":1}}}"#,
        #"{"t":"d","d":{"a":"m","b":{"p":"/rooms","d":{"b/n":9,"d":{"n":0}},"t":1}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/rooms/c","d":null,"t":1}}}"#,
        #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":{}}}}"#,
        #"{"t":"d","d":{"a":"c","b":{"p":"/rooms","q":[{"l":1}]}}}"#,
        #"{"t":"d","d":{"a":"ac","b":{"s":"expired_token","d":"gone"}}}"#,
        #"{"t":"d","d":{"a":"sd","b":{"msg":"debug"}}}"#,
        #"{"t":"c","d":{"t":"o","d":{}}}"#,
        #"{"t":"c","d":{"t":"s","d":"shutting down"}}"#,
        ConnectionStateMachineTests.hello,
        "0",
    ]

    /// Numbers and shapes that have broken clients before.
    static let hostile: [String] = [
        "1e300", "-1e300", "1.5", "-0", "9007199254740993", "null", "true", "\"1\"", "[]", "{}", "[[[[[[[[[[1]]]]]]]]]]",
        "\"\\ud800\"", "1e-400",
    ]

    @Test(arguments: [19, 20, 21, 22] as [UInt64])
    func randomAndMutatedMessagesNeverTrapAndEndInACleanDisconnect(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var machine = ConnectionStateMachine()
        var id = 0
        var disconnects = 0
        var messages = 0

        func reconnect() {
            let actions = machine.connect()
            guard case .open(let next)? = actions.first else {
                Issue.record("connect did not open a socket: \(actions)")
                return
            }
            id = next
            let hello = machine.received(ConnectionStateMachineTests.hello, on: id)
            if !machine.isConnected { Issue.record("the handshake did not connect: \(hello)") }
        }

        let queue = DispatchQueue(label: "fuzz")
        _ = machine.observe(path: Path(keys: ["rooms"]), query: .all, eventType: .value, queue: queue, callback: { _ in }, cancel: nil)
        // A filtered query too, so tagged pushes reach a view of their own.
        let window = Query(index: .child(Path(keys: ["n"])), limit: QueryLimit(count: 2, fromEnd: true))
        for eventType in [DataEventType.childAdded, .childMoved, .value] {
            _ = machine.observe(path: Path(keys: ["rooms"]), query: window, eventType: eventType, queue: queue, callback: { _ in }, cancel: nil)
        }
        reconnect()
        for _ in 0..<20_000 {
            let base = Self.corpus[Int.random(in: 0..<Self.corpus.count, using: &random)]
            // One message in four mutated, so the machine also gets deep into a connection.
            let mutated = Int.random(in: 0..<4, using: &random) == 0
            let frame = mutated ? Self.mutate(base, using: &random) : base
            let actions = machine.received(frame, on: id)
            messages += 1
            var closed = false
            for case .close(let closedID, let error) in actions {
                closed = true
                #expect(closedID == id)
                #expect(error != nil, "a close after \(frame) gave no reason")
            }
            if closed {
                disconnects += 1
                #expect(machine.lifecycle == .waiting(attempt: 1), "after \(frame)")
                #expect(actions.contains { if case .reconnect = $0 { return true } else { return false } })
                reconnect()
            } else if !mutated {
                #expect(machine.isConnected, "a valid message \(frame) disconnected")
            }
        }
        // Both branches ran: garbage was met, and the machine kept connecting again after it.
        #expect(messages == 20_000)
        #expect(disconnects > 100)
        #expect(machine.isConnected)
    }

    static func mutate(_ message: String, using random: inout SeededGenerator) -> String {
        var bytes = Array(message.utf8)
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            // Flip a byte.
            let index = Int.random(in: 0..<bytes.count, using: &random)
            bytes[index] = UInt8.random(in: 0...255, using: &random)
        case 1:
            // Cut it short.
            bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
        case 2:
            // Put a hostile value where a number or string was.
            let text = message.replacingFirstValue(with: hostile[Int.random(in: 0..<hostile.count, using: &random)], using: &random)
            return text
        case 3:
            // Duplicate a slice.
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let end = Int.random(in: start...bytes.count, using: &random)
            bytes.insert(contentsOf: bytes[start..<end], at: Int.random(in: 0...bytes.count, using: &random))
        case 4:
            // A frame count instead of a message, so the next frames are pieces; now and then one
            // over the size limit.
            let count =
                Int.random(in: 0..<10, using: &random) == 0 ? Int.random(in: 16_386...999_999, using: &random) : Int.random(in: 0...5, using: &random)
            return String(count)
        default:
            // Random bytes.
            bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    /// Replaces one value after a `:` (a number, a string, `null`…) with `replacement`.
    fileprivate func replacingFirstValue(with replacement: String, using random: inout SeededGenerator) -> String {
        let utf8 = Array(self.utf8)
        let colons = utf8.indices.filter { utf8[$0] == UInt8(ascii: ":") }
        guard let colon = colons.randomElement(using: &random) else { return self }
        var end = colon + 1
        let stops: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")]
        while end < utf8.count, !stops.contains(utf8[end]) { end += 1 }
        return String(decoding: utf8[...colon] + Array(replacement.utf8) + utf8[end...], as: UTF8.self)
    }
}
