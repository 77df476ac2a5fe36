import KindlingCore
import KindlingProtocol
import Logging
import NIOCore
import NIOSSL
import NIOWebSocket

/// One realtime client connection, after the WebSocket upgrade: frames in, requests to the
/// namespace; messages from the namespace, frames out.
///
/// It answers pings itself, reassembles split messages, and hands each read batch of requests
/// to the namespace together with those of the loop's other connections (see
/// `EventLoopInbox`). Bytes the socket has not taken are counted by the channel: past its
/// write-buffer water mark (`pauseMark`) the session stops reading requests until the reader
/// catches up, since each read can ask for far more than it sends (a `g` of a large tree), and
/// a reader that falls behind by more than its limit, or whose backlog the server-wide budget
/// cannot hold, is disconnected, so memory stays bounded.
final class WebSocketSessionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    let connection = ConnectionID.next()
    /// The connection's phase and role (a session of its own, or the carrier of a long-polling
    /// session it takes over), and what each event does to them.
    private var state: WebSocketSessionState
    private let namespace: Namespace
    private let outbox: EventLoopOutbox
    private let inbox: EventLoopInbox
    private let idleSweep: IdleSweep
    /// Where the outbox keeps this connection (from `handlerAdded` to `channelInactive`).
    private var slot: SessionSlot?
    /// When the client last sent anything (for the idle sweep).
    private(set) var lastRead = NIODeadline.now()
    private let maxPendingBytes: Int
    private let handshakeHost: String
    private let verifier: CredentialVerifier
    /// The server's logger, shared: a per-connection copy with metadata would cost every idle
    /// connection a few hundred bytes, so the metadata is given with each (rare) log line.
    private let logger: Logger
    private var assembler: FrameAssembler
    private let maxWebSocketMessageBytes: Int
    /// The frames in the socket's bytes (SwiftNIO's frame decoder is taken out at the upgrade).
    private var frames: ClientFrameReader
    /// `frames.pendingBytes` as of the end of the last read (read again only then: the reader
    /// is being mutated while it hands over frames).
    private var partialFrameBytes = 0
    private var fragments = FragmentedMessage.none
    private var inputs: [SessionInput] = []
    /// What parsing `inputs` took from the budget of requests in progress (`ParseCost`); it
    /// goes with them to the namespace, which gives it back once it has taken them.
    private var parsed = 0
    /// How many inputs the last read brought (see `queue`).
    private var lastReadInputs = 0
    private var context: ChannelHandlerContext?
    /// Where encoded frames enter the pipeline: just past SwiftNIO's frame encoder, since they
    /// already carry their headers (see `TextFrame`).
    private var framedOutput: ChannelHandlerContext?
    /// The socket, written directly while nothing waits in the pipeline (see
    /// `DirectSocketOutput`); nil with TLS, or where its descriptor cannot be found.
    private var direct: DirectSocketOutput?
    /// The channel, kept for `direct` and the backlog check of every flush (asking the context
    /// for it goes through the pipeline).
    private var channel: (any Channel)?
    /// Writes handed to the pipeline while `direct` is set that have not completed: until they
    /// have, later bytes go to the pipeline too, behind them, so the socket gets them in order.
    private var pipelineWrites = 0
    /// Frames given since the last flush, not yet written to the pipeline.
    private var joined = JoinedFrames()
    /// Allocates the joined frames' buffers: SwiftNIO's default, the channels' own, kept here
    /// since asking the pipeline for it on every frame cost more than joining the frame.
    private static let allocator = ByteBufferAllocator()
    /// The payload of the latest ping not yet answered.
    private var pendingPong: ByteBuffer?
    /// Closes the socket once `closingGrace` has passed after the close frame went out.
    private var closingCutoff: Scheduled<Void>?
    /// The bytes of a message received in part, counted against the server-wide budget.
    private let held: HeldMessageBytes
    /// The bytes waiting for this reader while it is behind, counted against the server-wide
    /// backlog budget.
    private let backlog: HeldMessageBytes
    private let metrics: ServerMetrics

    init(
        namespace: Namespace, outbox: EventLoopOutbox, inbox: EventLoopInbox, idleSweep: IdleSweep, handshakeHost: String, lastSession: SessionID?,
        verifier: CredentialVerifier, budget: InFlightBudget, backlogBudget: InFlightBudget, metrics: ServerMetrics,
        configuration: ServerConfiguration,
        takingOver: LongPollSession? = nil
    ) {
        self.state = WebSocketSessionState(role: takingOver.map { .takeover($0) } ?? .session(lastSession: lastSession))
        self.metrics = metrics
        self.verifier = verifier
        self.held = HeldMessageBytes(budget: budget)
        self.backlog = HeldMessageBytes(budget: backlogBudget)
        self.namespace = namespace
        self.outbox = outbox
        self.inbox = inbox
        self.idleSweep = idleSweep
        self.maxPendingBytes = configuration.maxPendingOutboundBytes
        self.assembler = FrameAssembler(maxMessageBytes: configuration.maxMessageBytes, readsOversizedToTheEnd: true)
        self.maxWebSocketMessageBytes = configuration.maxFrameBytes
        self.frames = ClientFrameReader(maxFrameBytes: configuration.maxFrameBytes)
        self.logger = configuration.logger
        self.handshakeHost = handshakeHost
    }

    private var metadata: Logger.Metadata { ["connection": "\(connection)", "namespace": "\(namespace.name)"] }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        metrics.connectionOpened(.websocket)
        let start = state.start()
        do {
            framedOutput = try context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
            direct = Self.directOutput(for: context)
            channel = context.channel
        } catch {
            logger.error("no WebSocket frame encoder in the pipeline; closing: \(error)", metadata: metadata)
            context.close(promise: nil)
            return
        }
        let lastSession: SessionID?
        switch start {
        case .takeOver(let session):
            idleSweep.add(self)
            logger.debug("taking a long-polling session over", metadata: metadata)
            session.offer(WebSocketTakeover(id: connection, eventLoop: context.eventLoop, handler: NIOLoopBound(self, eventLoop: context.eventLoop)))
            return
        case .attach(let last):
            lastSession = last
        }
        let slot = outbox.add(.webSocket(self))
        self.slot = slot
        // The session id goes to the client in the handshake and to the namespace, not kept here.
        let session = SessionID(connection: connection)
        namespace.attach(
            connection, session: session, replacing: lastSession, outbound: ConnectionOutbound(outbox: outbox, slot: slot),
            remote: namespace.profiledAddress(context.channel.remoteAddress))
        idleSweep.add(self)
        logger.debug("connected", metadata: metadata)
        let handshake = ServerMessage.handshake(
            timestamp: Namespace.now(),
            host: handshakeHost,
            session: session.description
        )
        write(TextFrame.frames(handshake))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Once the connection is closing, nothing more it sends is taken.
        guard state.isOpen else { return }
        do throws(ClientFrameReader.Refusal) {
            try frames.read(unwrapInboundIn(data)) { fin, opcode, payload in
                receiveFrame(fin: fin, opcode: opcode, payload: payload, context: context)
                return state.isOpen
            }
            // A frame not yet whole counts too: a client that starts large frames and never
            // ends them holds server memory just as one that never ends a message does.
            if partialFrameBytes != frames.pendingBytes, state.isOpen {
                partialFrameBytes = frames.pendingBytes
                holdPartial(context: context)
            }
        } catch {
            logger.notice("closing a realtime connection: \(error.reason)", metadata: metadata)
            close(context: context, code: error.closeCode, reason: error.reason)
        }
    }

    private func receiveFrame(fin: Bool, opcode: ClientFrameReader.Opcode, payload: UnsafeRawBufferPointer, context: ChannelHandlerContext) {
        // RFC 6455 §5.4: a message's fragments are not interleaved with another data frame
        // (control frames may come between them).
        if opcode == .text || opcode == .binary, fragments.isUnderWay {
            fragments = .none
            close(context: context, code: .protocolError, reason: "a data frame inside a fragmented message")
            return
        }
        switch opcode {
        case .text where fin:
            receiveUTF8(payload, context: context)
        case .text:
            fragments = .text(ByteBuffer(bytes: payload))
            holdPartial(context: context)
        case .continuation:
            continueMessage(fin: fin, payload, context: context)
        case .binary:
            if !fin { fragments = .binary }
            logger.debug("ignored a binary frame", metadata: metadata)
        case .ping:
            // RFC 6455 §5.5.3: only the latest ping needs its pong. One pong goes out after the
            // read that brought the pings, so a ping flood from a client that does not read
            // costs one small frame per read, not one per ping.
            pendingPong = ByteBuffer(bytes: payload)
        case .close:
            let reply = ClientCloseFrame.reply(to: payload)
            close(context: context, code: reply.code, reason: reply.reason)
        case .pong:
            break
        }
    }

    /// Adds a continuation frame to the message being received in pieces (clients may fragment
    /// a message at the WebSocket level).
    private func continueMessage(fin: Bool, _ piece: UnsafeRawBufferPointer, context: ChannelHandlerContext) {
        switch fragments {
        case .none:
            close(context: context, code: .protocolError, reason: "continuation frame without a message to continue")
        case .binary:
            if fin { fragments = .none }
        case .text(var collected):
            fragments = .none
            guard collected.readableBytes + piece.count <= maxWebSocketMessageBytes else {
                close(context: context, code: .messageTooLarge, reason: "message larger than \(maxWebSocketMessageBytes) bytes")
                return
            }
            collected.writeBytes(piece)
            if fin {
                holdPartial(context: context)
                collected.withUnsafeReadableBytes { receiveUTF8($0, context: context) }
            } else {
                fragments = .text(collected)
                holdPartial(context: context)
            }
        }
    }

    /// Adds an input for the namespace. The first of a read gets room for as many as the last
    /// read brought (up to 64), so a pipelining client's batch is one allocation rather than
    /// one per doubling; an idle connection holds no room at all.
    private func queue(_ input: consuming SessionInput) {
        if inputs.isEmpty, lastReadInputs > 1 { inputs.reserveCapacity(min(lastReadInputs, 64)) }
        inputs.append(input)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        lastRead = .now()
        sendPong()
        guard !inputs.isEmpty else { return }
        if case .takeover(let session) = state.role {
            session.receiveFromWebSocket(inputs, parsed: parsed, from: connection)
        } else {
            inbox.add(inputs, from: connection, to: namespace, parsed: parsed)
        }
        lastReadInputs = inputs.count
        inputs = []
        parsed = 0
    }

    /// The pipeline let go of this handler: let go of its context in turn (each holds the
    /// other, so neither would ever be freed), and of whatever a message received in part still
    /// holds (its counts against the budgets were given back in `channelInactive`). Before,
    /// every realtime connection stayed in memory after it closed, with up to the 16 MiB of a
    /// message it had left unfinished.
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        framedOutput = nil
        direct = nil
        channel = nil
        fragments = .none
        frames = ClientFrameReader(maxFrameBytes: frames.maxFrameBytes)
        assembler = FrameAssembler(maxMessageBytes: assembler.maxMessageBytes, readsOversizedToTheEnd: true)
        joined = JoinedFrames()
        pendingPong = nil
        inputs = []
        inbox.parseBudget.release(parsed)
        parsed = 0
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Closed in time: the cutoff would only hold the context until it fired.
        closingCutoff?.cancel()
        closingCutoff = nil
        held.update(to: 0)
        backlog.update(to: 0)
        logger.debug("disconnected", metadata: metadata)
        switch state.end() {
        case .detach:
            metrics.connectionClosed(.websocket)
            // Its requests still in the inbox reach the namespace before it forgets the connection.
            inbox.handOff()
            namespace.detach(connection)
        case .loseTakeover(let session):
            metrics.connectionClosed(.websocket)
            session.webSocketLost(connection)
        case nil:
            break
        }
        if let slot {
            self.slot = nil
            outbox.remove(slot)
        }
        idleSweep.remove(self)
        context.fireChannelInactive()
    }

    /// Closes the connection after a silence longer than the idle timeout (the idle sweep).
    func closeIdle() {
        guard let context, state.closeAbruptly() else { return }
        logger.info("closing a connection silent for too long", metadata: metadata)
        context.close(promise: nil)
    }

    /// Completes when the connection has closed (nil before the handler is in a pipeline).
    var closeFuture: EventLoopFuture<Void>? { context?.channel.closeFuture }

    /// The client's address (for the profiler), while the connection is set up.
    var remoteAddress: SocketAddress? { context?.channel.remoteAddress }

    /// Closes the connection with "going away" (1001) and `reason`, so the SDK reconnects and
    /// resends what was not acknowledged (a deposed cluster leader dropped its held answers).
    func closeGoingAway(reason: String) {
        guard let context else { return }
        close(context: context, code: .goingAway, reason: reason)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.info("connection error: \(error)", metadata: metadata)
        _ = state.closeAbruptly()
        context.close(promise: nil)
    }

    /// Receives a whole text frame's payload, which RFC 6455 requires to be valid UTF-8 (1007).
    /// The message is decoded from the payload's own bytes: no string of it is made.
    private func receiveUTF8(_ payload: UnsafeRawBufferPointer, context: ChannelHandlerContext) {
        // ASCII (every SDK message without non-ASCII data) is valid UTF-8 as it stands; only
        // other text pays for the full check.
        guard FramePayload.isASCII(payload) || String(validating: payload, as: UTF8.self) != nil else {
            logger.notice("closing: a text frame that is not valid UTF-8", metadata: metadata)
            close(context: context, code: .dataInconsistentWithMessage, reason: "text frame is not valid UTF-8")
            return
        }
        receive(payload, context: context)
        holdPartial(context: context)
    }

    /// Counts what the connection holds of messages and frames received in part against the
    /// server-wide budget; closes the connection (1013, try again later) when the budget cannot
    /// hold them.
    private func holdPartial(context: ChannelHandlerContext) {
        var bytes = partialFrameBytes + assembler.bufferedBytes
        if case .text(let collected) = fragments { bytes += collected.readableBytes }
        guard !held.update(to: bytes) else { return }
        fragments = .none
        logger.warning("closing: the server holds too many partly received messages (budget \(held.budget.limit) bytes)", metadata: metadata)
        close(context: context, code: WebSocketErrorCode(codeNumber: 1013), reason: "server busy; retry later")
    }

    private func receive(_ frame: UnsafeRawBufferPointer, context: ChannelHandlerContext) {
        do throws(ProtocolError) {
            switch try assembler.receive(utf8: frame) {
            case .nothing: return
            case .thisFrame: decode(frame, context: context)
            case .message(var text):
                text.withUTF8 { bytes in decode(UnsafeRawBufferPointer(bytes), context: context) }
            }
        } catch {
            if let number = error.requestNumber {
                if error.kind == .tooLarge { logger.notice("refused a request over the message size limit: \(error.message)", metadata: metadata) }
                let status = error.validation.map(WireStatus.init) ?? (error.kind == .tooLarge ? .tooBig : .invalidData)
                queue(.reject(number: number, status: status, message: error.message))
                return
            }
            logger.notice("closing: \(error.message)", metadata: metadata)
            close(context: context, code: error.kind == .tooLarge ? .messageTooLarge : .unacceptableData, reason: error.message)
        }
    }

    /// Decodes one whole message and queues its request, once the budget of requests in progress
    /// holds what parsing it takes (`RealtimeDecoding`): many connections finishing large
    /// messages of small values in one loop turn would otherwise have them all parsed and held
    /// at once, several times their size each, before any namespace takes them.
    private func decode(_ bytes: UnsafeRawBufferPointer, context: ChannelHandlerContext) {
        switch RealtimeDecoding.decode(bytes, budget: inbox.parseBudget, verifier: verifier) {
        case .input(let input, let share):
            // Moved, not copied, into the batch: an input is a large value holding the request's data.
            queue(input)
            parsed += share
        case .refused(let refusal, let note):
            if let note { logger.notice("\(note)", metadata: metadata) }
            queue(refusal)
        case .ping:
            write(TextFrame.frames(ServerMessage.pong))
        case .control(let type):
            // The client's switch ack on a WebSocket taking a long-polling session over.
            if type == "a", case .takeover(let session) = state.role { session.webSocketAcknowledged(by: connection) }
        case .nothing:
            break
        case .close(let reason, let tooLarge, let busy):
            if busy {
                logger.warning(
                    "closing: the server holds too many requests in progress (budget \(inbox.parseBudget.limit) bytes)", metadata: metadata)
                close(context: context, code: WebSocketErrorCode(codeNumber: 1013), reason: reason)
            } else {
                logger.notice("closing: \(reason)", metadata: metadata)
                close(context: context, code: tooLarge ? .messageTooLarge : .unacceptableData, reason: reason)
            }
        }
    }

    /// Answers the latest ping; counted with everything else waiting to be sent.
    private func sendPong() {
        guard let payload = pendingPong, let context, state.isOpen else { return }
        pendingPong = nil
        writeJoined()
        pipelineWrite(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: payload)), through: context, flush: false)
        framedOutput?.flush()
        checkBacklog(context: context)
    }

    /// Writes encoded frames now (the session's own replies).
    func write(_ frames: [ByteBuffer]) {
        _ = enqueue(frames)
        flush()
    }

    /// Takes encoded frames to send at the next flush; true when the connection had nothing
    /// waiting, so the caller must flush it later.
    func enqueue(_ frames: [ByteBuffer]) -> Bool {
        var mustFlush = false
        for frame in frames where enqueue(frame) { mustFlush = true }
        return mustFlush
    }

    /// Takes one encoded frame to send at the next flush (a fan-out's usual delivery); true
    /// when the connection had nothing waiting, so the caller must flush it later.
    func enqueue(_ frame: ByteBuffer) -> Bool {
        guard let framedOutput, state.isOpen else { return false }
        let mustFlush = joined.isEmpty
        if let first = joined.add(frame, allocator: Self.allocator) {
            send(first, through: framedOutput, flush: false)
        }
        return mustFlush
    }

    /// Sends what was given since the last flush; disconnects the reader when more than the
    /// limit is still waiting after the socket took what it could.
    func flush() {
        guard let context, let framedOutput, let bytes = joined.take() else { return }
        // Bytes the socket took whole, with none of the pipeline's waiting, leave SwiftNIO
        // holding nothing for the connection: it is writable, and no backlog can have grown.
        // (Reading the channel's writability to find that out touched one more object per
        // connection: 4% of a fan-out to 1,000's server CPU, BENCHMARKS.md, issue 40, round 8.)
        if send(bytes, through: framedOutput, flush: true) { return }
        checkBacklog(context: context)
    }

    /// Hands the joined frames to the pipeline, ahead of a frame written to it directly.
    private func writeJoined() {
        guard let framedOutput, let bytes = joined.take() else { return }
        pipelineWrite(NIOAny(bytes), through: framedOutput, flush: false)
    }

    /// Sends encoded frames: to the socket itself when nothing waits in the pipeline (see
    /// `direct`), and whatever the socket does not take to the pipeline (in one pass for the
    /// write and the flush when `flush`). True when the socket took every byte itself.
    @discardableResult
    private func send(_ bytes: ByteBuffer, through output: ChannelHandlerContext, flush: Bool) -> Bool {
        var bytes = bytes
        if let direct, pipelineWrites == 0, state.isOpen, channel?.isActive == true, direct.write(&bytes) == .all { return true }
        pipelineWrite(NIOAny(bytes), through: output, flush: flush)
        return false
    }

    /// Hands `data` to the pipeline at `output`; counted in `pipelineWrites` until it
    /// completes while the socket is also written directly.
    private func pipelineWrite(_ data: NIOAny, through output: ChannelHandlerContext, flush: Bool) {
        var promise: EventLoopPromise<Void>?
        if direct != nil {
            pipelineWrites += 1
            let written = output.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { _ in self.pipelineWrites -= 1 }
            promise = written
        }
        if flush {
            output.writeAndFlush(data, promise: promise)
        } else {
            output.write(data, promise: promise)
        }
    }

    /// The socket to write directly, for a connection without TLS (which encrypts in the
    /// pipeline) whose upgrade left nothing waiting in the pipeline (its answer has normally
    /// been written by then).
    private static func directOutput(for context: ChannelHandlerContext) -> DirectSocketOutput? {
        guard (try? context.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self)) == nil,
            (try? context.channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) == 0
        else { return nil }
        return DirectSocketOutput(channel: context.channel)
    }

    /// The bytes waiting past which a session stops reading requests (the channel's high water
    /// mark; it reads again below half of it): a megabyte, or the connection's limit if lower.
    static func pauseMark(limit: Int) -> Int { max(2, min(limit, 1024 * 1024)) }

    /// Past the pause mark: stops reading, and disconnects the reader when what waits is over
    /// its limit or the server-wide budget cannot hold it.
    private func checkBacklog(context: ChannelHandlerContext) {
        guard let channel, !channel.isWritable, state.isOpen else { return }
        let waiting = (try? context.channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 0
        let overLimit = waiting > maxPendingBytes
        let action = state.fellBehind(overLimit: overLimit, budgetHolds: overLimit || backlog.update(to: waiting))
        // Written here rather than with SwiftNIO's `BackPressureHandler`: that one holds back
        // the next read, but the read asked for when the last one completed, before this
        // flush, still happens. Turning `autoRead` off cancels it, so nothing more is read.
        switch action {
        case .none:
            return
        case .stopReading:
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        case .disconnect(let cause, let stopReading):
            if stopReading { try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false) }
            let reason =
                switch cause {
                case .overLimit: "more than \(maxPendingBytes) bytes waiting"
                case .budget: "the server-wide budget of \(backlog.budget.limit) bytes waiting for slow readers is used up"
                }
            // No close frame: it would queue behind the backlog the reader is not taking.
            logger.warning("disconnecting a reader that fell behind: \(reason)", metadata: metadata)
            metrics.slowReaderDisconnected()
            context.close(promise: nil)
        }
    }

    /// The reader caught up (below half the pause mark): its backlog no longer counts, and its
    /// requests are read again.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, state.caughtUp() {
            backlog.update(to: 0)
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
        }
        context.fireChannelWritabilityChanged()
    }

    private func close(context: ChannelHandlerContext, code: WebSocketErrorCode, reason: String) {
        guard let resumeReading = state.close() else { return }
        // What was given before the close goes out before it.
        writeJoined()
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(Self.closeReason(reason))
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        // Requests the client sent while reading was paused must be read (and dropped): closing
        // a socket with unread bytes resets it, and the reset throws away what the client had
        // not yet read of its answers and of the close frame.
        if resumeReading {
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
        }
        context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { result in
            guard case .success = result else { return context.close(promise: nil) }
            // Half-closed: the client reads to the close frame, answers it and closes, and the
            // socket then closes for good (RFC 6455 §7.1.1); one that does not within
            // `closingGrace` is cut off.
            context.close(mode: .output, promise: nil)
            self.closingCutoff = context.eventLoop.assumeIsolated().scheduleTask(in: Self.closingGrace) { context.close(promise: nil) }
        }
    }

    /// `reason` cut to what a close frame holds: a control frame carries at most 125 bytes, two
    /// of them the code, so at most 123 bytes of UTF-8, cut between characters' scalars.
    static func closeReason(_ reason: String) -> String {
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in reason.unicodeScalars {
            bytes += UTF8.width(scalar)
            guard bytes <= 123 else { break }
            kept.append(scalar)
        }
        return String(kept)
    }

    /// How long a client may take to close after the server's close frame reached its socket.
    static let closingGrace = TimeAmount.seconds(2)
}
