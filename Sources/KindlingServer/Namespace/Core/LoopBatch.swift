import KindlingProtocol
import NIOCore

/// One event loop's share of a dispatch: each message's frames once, then the slots of the
/// connections that get it, in dispatch order. A fan-out to thousands of this loop's connections
/// is one frames array and a run of plain slots, not an array and a reference per recipient; a
/// message to one connection (an answer, mostly) is framed into a buffer the batch's small
/// messages share, not a buffer of its own.
struct LoopBatch: Sendable {
    /// Where a run's frames are.
    private enum Frames {
        /// Buffers of the dispatch's, the same for every loop (a message to several connections,
        /// or a large one).
        case shared([ByteBuffer])
        /// A range of `small`.
        case small(Range<Int>)
    }

    let outbox: EventLoopOutbox
    /// Each message with the end of its run in `slots` (the run starts where the previous ends).
    private var runs: [(frames: Frames, end: Int)] = []
    private var slots: [SessionSlot] = []
    /// The frames of the messages to one connection, one after another (nil until the first).
    private var small: ByteBuffer?
    /// The dispatch's number of the message of the last run, while recipients are added.
    private var lastMessage: Int?
    /// Budget held until the loop has handed the batch to its connections (then let go with it).
    var holds: [BudgetHold] = []

    init(outbox: EventLoopOutbox) { self.outbox = outbox }

    /// Adds a recipient of message number `message` (numbered by the dispatch, in order): the
    /// same message as the last run extends it.
    mutating func add(_ slot: SessionSlot, _ frames: [ByteBuffer], message: Int) {
        slots.append(slot)
        if message == lastMessage, let last = runs.indices.last {
            runs[last].end = slots.count
        } else {
            runs.append((.shared(frames), slots.count))
            lastMessage = message
        }
    }

    /// Adds a message for one connection alone, of at most one frame's length.
    mutating func add(_ slot: SessionSlot, single message: [UInt8]) {
        let range = withSmall { bytes in
            let start = bytes.writerIndex
            TextFrame.write(message[...], into: &bytes)
            return start..<bytes.writerIndex
        }
        runs.append((.small(range), slots.count + 1))
        slots.append(slot)
        lastMessage = nil
    }

    /// Adds the `ok` answer to request `number` for one connection, written straight into
    /// `small` as a frame (`ServerMessage.writeOKResponse`); returns the answer's length.
    mutating func add(_ slot: SessionSlot, acknowledging number: Int) -> Int {
        let range = withSmall { bytes in
            let start = bytes.writerIndex
            // The answer is under 126 bytes, so its frame's header is two bytes.
            bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: 2 + ServerMessage.okResponseMaxCount) { frame in
                let length = ServerMessage.writeOKResponse(number, into: UnsafeMutableRawBufferPointer(rebasing: frame[2...]))
                frame[0] = TextFrame.finalText
                frame[1] = UInt8(length)
                return 2 + length
            }
            return start..<bytes.writerIndex
        }
        runs.append((.small(range), slots.count + 1))
        slots.append(slot)
        lastMessage = nil
        return range.count - 2
    }

    /// Changes `small` in place (made on first use): no copy of the buffer's reference, so
    /// its writes never find it shared.
    private mutating func withSmall<Result>(_ body: (inout ByteBuffer) -> Result) -> Result {
        if small == nil { small = ByteBufferAllocator().buffer(capacity: 1024) }
        return body(&small!)
    }

    /// Appends `later`'s messages after these (numbers from another dispatch never extend a run).
    mutating func append(_ later: LoopBatch) {
        let offset = slots.count
        slots.append(contentsOf: later.slots)
        var base = 0
        if let laterSmall = later.small {
            var bytes = small ?? ByteBufferAllocator().buffer(capacity: laterSmall.readableBytes)
            small = nil
            base = bytes.writerIndex
            bytes.writeImmutableBuffer(laterSmall)
            small = bytes
        }
        runs.append(
            contentsOf: later.runs.lazy.map { run in
                switch run.frames {
                case .shared: (run.frames, run.end + offset)
                case .small(let range): (.small(range.lowerBound + base..<range.upperBound + base), run.end + offset)
                }
            }
        )
        lastMessage = nil
    }

    /// A message with at least this many recipients on the loop is copied into a buffer of the
    /// loop's own before it is handed to them.
    static let sharedAcrossLoops = 8

    /// The messages in order, each run of them that goes to exactly the same connections as one
    /// delivery: their frames joined into one buffer, which each of those connections is handed
    /// once (a fan-out of many events to the same listeners costs one hand-over per listener,
    /// not one per event; a pipelining client's answers are one slice of `small`). A run may
    /// join an earlier one with the same connections across messages for a few others (the
    /// writer's `ok` between two events it does not listen to), which are then handed over
    /// after it: no connection gets any of its messages out of order, since none of those few
    /// is among the run's connections.
    ///
    /// A message to many connections is also copied into a buffer of the loop's own, so the
    /// loops do not count references to one shared buffer from two cores at once. Runs larger
    /// than `JoinedFrames.limit` are not copied: they are handed over frame by frame.
    func forEachDelivery(_ body: (ByteBuffer, ArraySlice<SessionSlot>) -> Void) {
        var delivered = [Bool](repeating: false, count: runs.count)
        var group: [Int] = []
        for index in runs.indices where !delivered[index] {
            let recipients = slots(of: index)
            group.removeAll(keepingCapacity: true)
            group.append(index)
            var next = index + 1
            var passed = 0
            while next < runs.count {
                defer { next += 1 }
                if delivered[next] { continue }
                let candidate = slots(of: next)
                if Self.same(recipients, candidate) {
                    group.append(next)
                    passed = 0
                    continue
                }
                // Passed over only when it is for one connection that gets none of this group,
                // and only `passable` in a row.
                guard passed < Self.passable, candidate.count == 1, let other = candidate.first, !recipients.contains(other) else { break }
                passed += 1
            }
            for member in group { delivered[member] = true }
            deliver(group, to: recipients, body)
        }
    }

    /// How many runs for other connections in a row a group looks past for more of its own.
    static let passable = 4

    /// The slots of run `index`.
    private func slots(of index: Int) -> ArraySlice<SessionSlot> {
        slots[(index == 0 ? 0 : runs[index - 1].end)..<runs[index].end]
    }

    /// Hands the runs of `group` (in order) to `recipients`: one slice of `small` when they lie
    /// back to back there, else one joined copy, or frame by frame when that would be large.
    private func deliver(_ group: [Int], to recipients: ArraySlice<SessionSlot>, _ body: (ByteBuffer, ArraySlice<SessionSlot>) -> Void) {
        if let range = smallRange(of: group), let slice = small?.getSlice(at: range.lowerBound, length: range.count) {
            body(slice, recipients)
            return
        }
        let total = group.reduce(0) { $0 + byteCount(runs[$1].frames) }
        if total > JoinedFrames.limit || (group.count == 1 && recipients.count < Self.sharedAcrossLoops) {
            // Frame by frame to all of them: each still gets the frames in order.
            for member in group { forEachFrame(of: runs[member].frames) { body($0, recipients) } }
        } else {
            var joined = ByteBufferAllocator().buffer(capacity: total)
            for member in group { forEachFrame(of: runs[member].frames) { joined.writeImmutableBuffer($0) } }
            body(joined, recipients)
        }
    }

    /// The range of `small` the runs of `group` cover, when they are all there, back to back.
    private func smallRange(of group: [Int]) -> Range<Int>? {
        var covered: Range<Int>?
        for member in group {
            guard case .small(let range) = runs[member].frames else { return nil }
            if let sofar = covered {
                guard sofar.upperBound == range.lowerBound else { return nil }
                covered = sofar.lowerBound..<range.upperBound
            } else {
                covered = range
            }
        }
        return covered
    }

    private func byteCount(_ frames: Frames) -> Int {
        switch frames {
        case .shared(let frames): frames.reduce(0) { $0 + $1.readableBytes }
        case .small(let range): range.count
        }
    }

    /// Each frame of a run, as a buffer (a slice of `small` for a small message).
    private func forEachFrame(of frames: Frames, _ body: (ByteBuffer) -> Void) {
        switch frames {
        case .shared(let frames):
            for frame in frames { body(frame) }
        case .small(let range):
            if let slice = small?.getSlice(at: range.lowerBound, length: range.count) { body(slice) }
        }
    }

    /// Whether two runs of slots name the same connections in the same order.
    private static func same(_ a: ArraySlice<SessionSlot>, _ b: ArraySlice<SessionSlot>) -> Bool {
        a.count == b.count && a.elementsEqual(b)
    }
}
