import KindlingCore
import KindlingProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import KindlingServer

/// One event loop's share of a dispatch: every connection gets its messages in dispatch order
/// (a writer's event before its `ok`), each message's frames kept once for all its recipients.
struct LoopBatchTests {
    static func frames(_ texts: String...) -> [ByteBuffer] { texts.map { ByteBuffer(string: $0) } }

    /// What each slot is handed, in the order the loop writes it (the bytes of each hand-over);
    /// and how many hand-overs the batch makes.
    static func received(_ batch: LoopBatch) -> (bySlot: [SessionSlot: [String]], handOvers: Int) {
        var bySlot: [SessionSlot: [String]] = [:]
        var handOvers = 0
        batch.forEachDelivery { frame, slots in
            handOvers += 1
            for slot in slots { bySlot[slot, default: []].append(String(buffer: frame)) }
        }
        return (bySlot, handOvers)
    }

    @Test func eachConnectionGetsItsMessagesInDispatchOrder() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let (writer, a, b) = (SessionSlot(index: 0, generation: 0), SessionSlot(index: 1, generation: 0), SessionSlot(index: 2, generation: 3))
        var batch = LoopBatch(outbox: outbox)
        // Message 0 (the event) to three listeners, message 1 (the ok) to the writer, message
        // 2 (a value in two frames) to two listeners in another order.
        for slot in [a, writer, b] { batch.add(slot, Self.frames("event"), message: 0) }
        batch.add(writer, Self.frames("ok"), message: 1)
        for slot in [b, a] { batch.add(slot, Self.frames("big-1", "big-2"), message: 2) }
        let received = Self.received(batch)
        // The two frames of message 2 go to its two recipients one after the other.
        #expect(received.handOvers == 4)
        #expect(received.bySlot[writer] == ["event", "ok"])
        #expect(received.bySlot[a] == ["event", "big-1", "big-2"])
        #expect(received.bySlot[b] == ["event", "big-1", "big-2"])
        try loop.syncShutdownGracefully()
    }

    @Test func aLaterDispatchGoesAfterAndNeverJoinsARun() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let (a, b) = (SessionSlot(index: 0, generation: 0), SessionSlot(index: 1, generation: 0))
        var first = LoopBatch(outbox: outbox)
        first.add(a, Self.frames("first"), message: 0)
        first.add(b, Self.frames("first"), message: 0)
        // Numbered from 0 again by its own dispatch: the same number is another message.
        var later = LoopBatch(outbox: outbox)
        later.add(b, Self.frames("later"), message: 0)
        later.add(a, Self.frames("later"), message: 0)
        first.append(later)
        first.add(a, Self.frames("last"), message: 0)
        let received = Self.received(first)
        #expect(received.handOvers == 3)
        #expect(received.bySlot[a] == ["first", "later", "last"])
        #expect(received.bySlot[b] == ["first", "later"])
        try loop.syncShutdownGracefully()
    }

    @Test func messagesToTheSameConnectionsAreHandedOverJoinedAndInOrder() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let listeners = (0..<20).map { SessionSlot(index: UInt32($0), generation: 0) }
        let writer = listeners[3]
        var batch = LoopBatch(outbox: outbox)
        // Three events to the same twenty listeners, then an ok to one, then two more events.
        for text in ["e1", "e2", "e3"] { for slot in listeners { batch.add(slot, Self.frames(text), message: Int(text.dropFirst())!) } }
        batch.add(writer, Self.frames("ok"), message: 4)
        for (number, text) in [(5, "e5"), (6, "e6a")] { for slot in listeners { batch.add(slot, Self.frames(text, "+"), message: number) } }
        let shared = Self.frames("shared")[0]
        var single = LoopBatch(outbox: outbox)
        for slot in listeners { single.add(slot, [shared], message: 0) }
        var handedOver: [ByteBuffer] = []
        single.forEachDelivery { frame, slots in
            #expect(slots.count == listeners.count)
            handedOver.append(frame)
        }
        let received = Self.received(batch)
        #expect(received.handOvers == 3)
        #expect(received.bySlot[listeners[0]] == ["e1e2e3", "e5+e6a+"])
        #expect(received.bySlot[writer] == ["e1e2e3", "ok", "e5+e6a+"])
        // One message to many: the same bytes, in a buffer of the loop's own.
        #expect(handedOver == [shared])
        let address = { (buffer: ByteBuffer) in buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } }
        #expect(handedOver.first.map(address) != address(shared))
        try loop.syncShutdownGracefully()
    }

    @Test func messagesToOneConnectionShareOneBufferAndComeOutInOrder() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let (writer, listener) = (SessionSlot(index: 0, generation: 0), SessionSlot(index: 1, generation: 0))
        let frame = { (text: String) in String(buffer: TextFrame.encoded(Array(text.utf8)[...])) }
        var batch = LoopBatch(outbox: outbox)
        batch.add(writer, single: Array("ok1".utf8))
        batch.add(writer, single: Array("ok2".utf8))
        batch.add(listener, single: Array("event".utf8))
        batch.add(writer, single: Array("ok3".utf8))
        // A later dispatch's answers to the same connection join the last run.
        var later = LoopBatch(outbox: outbox)
        later.add(writer, single: Array("ok4".utf8))
        later.add(writer, single: Array("ok5".utf8))
        batch.append(later)
        batch.add(writer, Self.frames("shared"), message: 9)
        let received = Self.received(batch)
        // The listener's event does not split the writer's run (it is not the writer's), and the
        // shared message to the writer alone joins it too.
        #expect(received.bySlot[writer] == [frame("ok1") + frame("ok2") + frame("ok3") + frame("ok4") + frame("ok5") + "shared"])
        #expect(received.bySlot[listener] == [frame("event")])
        #expect(received.handOvers == 2)
        try loop.syncShutdownGracefully()
    }

    /// The `ok` answers written straight into the batch are byte for byte the frame of
    /// `ServerMessage.response(number, status: .ok)`, for numbers of every length, and keep
    /// their place among the connection's other messages.
    @Test func okAnswersWrittenInPlaceAreTheResponsesFrames() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let (writer, listener) = (SessionSlot(index: 0, generation: 0), SessionSlot(index: 1, generation: 0))
        let numbers = [0, 7, 10, 99, 12_345, 999_999_999_999_999, Int.max, -1, Int.min]
        let frame = { (bytes: [UInt8]) in String(buffer: TextFrame.encoded(bytes[...])) }
        var batch = LoopBatch(outbox: outbox)
        var expected = ""
        for number in numbers {
            let response = ServerMessage.response(number, status: .ok)
            #expect(batch.add(writer, acknowledging: number) == response.count)
            expected += frame(response)
        }
        batch.add(listener, single: Array("event".utf8))
        batch.add(writer, single: Array("after".utf8))
        let received = Self.received(batch)
        #expect(received.bySlot[writer] == [expected + frame(Array("after".utf8))])
        #expect(received.bySlot[listener] == [frame(Array("event".utf8))])
        #expect(String(decoding: ServerMessage.response(42, status: .ok), as: UTF8.self) == #"{"t":"d","d":{"r":42,"b":{"s":"ok","d":{}}}}"#)
        try loop.syncShutdownGracefully()
    }

    /// A writer's `ok` between two events it does not listen to does not split the listeners'
    /// delivery; a writer that listens gets event, ok, event in that order; a run for several
    /// others in between is never passed over.
    @Test func eventsJoinAcrossAnswersToOthersButNeverOvertakeOnesOwn() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let listeners = (1...3).map { SessionSlot(index: UInt32($0), generation: 0) }
        let writer = SessionSlot(index: 0, generation: 0)
        let frame = { (text: String) in String(buffer: TextFrame.encoded(Array(text.utf8)[...])) }

        // The writer does not listen: one hand-over of both events per listener, its two oks
        // as one slice after them.
        var batch = LoopBatch(outbox: outbox)
        for slot in listeners { batch.add(slot, Self.frames("e1"), message: 0) }
        batch.add(writer, single: Array("ok1".utf8))
        for slot in listeners { batch.add(slot, Self.frames("e2"), message: 2) }
        batch.add(writer, single: Array("ok2".utf8))
        var received = Self.received(batch)
        for slot in listeners { #expect(received.bySlot[slot] == ["e1e2"]) }
        #expect(received.bySlot[writer] == [frame("ok1") + frame("ok2")])
        #expect(received.handOvers == 2)

        // The writer listens: it gets e1, ok1, e2 in that order.
        let everyone = [writer] + listeners
        batch = LoopBatch(outbox: outbox)
        for slot in everyone { batch.add(slot, Self.frames("e1"), message: 0) }
        batch.add(writer, single: Array("ok1".utf8))
        for slot in everyone { batch.add(slot, Self.frames("e2"), message: 2) }
        received = Self.received(batch)
        #expect(received.bySlot[writer] == ["e1", frame("ok1"), "e2"])
        for slot in listeners { #expect(received.bySlot[slot] == ["e1", "e2"]) }

        // A message to two others between the events is not passed over, though neither listens.
        let (other, another) = (SessionSlot(index: 8, generation: 0), SessionSlot(index: 9, generation: 0))
        batch = LoopBatch(outbox: outbox)
        for slot in listeners { batch.add(slot, Self.frames("e1"), message: 0) }
        for slot in [other, another] { batch.add(slot, Self.frames("x"), message: 1) }
        for slot in listeners { batch.add(slot, Self.frames("e2"), message: 2) }
        received = Self.received(batch)
        #expect(received.handOvers == 3)
        for slot in listeners { #expect(received.bySlot[slot] == ["e1", "e2"]) }
        #expect(received.bySlot[other] == ["x"])
        try loop.syncShutdownGracefully()
    }

    /// A group looks past at most `passable` runs for others in a row.
    @Test func aGroupLooksPastAtMostPassableRuns() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let listeners = (1...3).map { SessionSlot(index: UInt32($0), generation: 0) }
        for between in [LoopBatch.passable, LoopBatch.passable + 1] {
            var batch = LoopBatch(outbox: outbox)
            for slot in listeners { batch.add(slot, Self.frames("e1"), message: 0) }
            for other in 0..<between { batch.add(SessionSlot(index: UInt32(10 + other), generation: 0), single: Array("ok".utf8)) }
            for slot in listeners { batch.add(slot, Self.frames("e2"), message: between + 1) }
            let received = Self.received(batch)
            for slot in listeners { #expect(received.bySlot[slot] == (between <= LoopBatch.passable ? ["e1e2"] : ["e1", "e2"])) }
        }
        try loop.syncShutdownGracefully()
    }

    /// However the runs interleave, every connection gets exactly its messages in dispatch
    /// order (random batches of answers and events to random sets of connections).
    @Test func anyInterleavingKeepsEveryConnectionsOrder() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let connections = (0..<6).map { SessionSlot(index: UInt32($0), generation: 0) }
        var random = SeededGenerator(seed: 6)
        for _ in 0..<500 {
            var batch = LoopBatch(outbox: outbox)
            var expected: [SessionSlot: [String]] = [:]
            for message in 0..<Int.random(in: 1...12, using: &random) {
                let text = "m\(message);"
                if Bool.random(using: &random) {
                    let slot = connections.randomElement(using: &random)!
                    batch.add(slot, single: Array(text.utf8))
                    expected[slot, default: []].append(String(buffer: TextFrame.encoded(Array(text.utf8)[...])))
                } else {
                    let some = connections.filter { _ in Bool.random(using: &random) }
                    for slot in some {
                        batch.add(slot, Self.frames(text), message: message)
                        expected[slot, default: []].append(text)
                    }
                }
            }
            var got: [SessionSlot: String] = [:]
            batch.forEachDelivery { frame, slots in
                for slot in slots { got[slot, default: ""] += String(buffer: frame) }
            }
            for slot in connections { #expect(got[slot, default: ""] == expected[slot, default: []].joined()) }
        }
        try loop.syncShutdownGracefully()
    }

    @Test func largeRunsAreHandedOverFrameByFrameNotCopied() throws {
        let loop = EmbeddedEventLoop()
        let outbox = EventLoopOutbox(eventLoop: loop)
        let listeners = (0..<20).map { SessionSlot(index: UInt32($0), generation: 0) }
        let big = [ByteBuffer(repeating: 0x61, count: JoinedFrames.limit), ByteBuffer(repeating: 0x62, count: 10)]
        var batch = LoopBatch(outbox: outbox)
        for (number, frame) in big.enumerated() { for slot in listeners { batch.add(slot, [frame], message: number) } }
        let address = { (buffer: ByteBuffer) in buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } }
        var handedOver: [ByteBuffer] = []
        batch.forEachDelivery { frame, slots in
            #expect(slots.count == listeners.count)
            handedOver.append(frame)
        }
        // Together over the limit: both as they are, in order, the same buffers.
        #expect(handedOver == big)
        #expect(handedOver.map(address) == big.map(address))
        try loop.syncShutdownGracefully()
    }
}
