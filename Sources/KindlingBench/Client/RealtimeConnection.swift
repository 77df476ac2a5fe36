import KindlingCore
import KindlingProtocol
import NIOCore
import NIOWebSocket

/// The lean realtime client: one WebSocket connection driven entirely on its event loop.
///
/// It reads the frames from the socket's bytes itself (`ServerFrameReader`), answers control
/// pings, joins split messages, and hands every other message to its behaviour as bytes, so the
/// per-message cost is finding the frame plus whatever scan the scenario needs. Requests are
/// written straight into a buffer (`{"t":"d","d":{"r":N,"a":A,"b":…}}`) and only flushed when
/// the scenario says so, so a batch costs one syscall.
public final class RealtimeConnection: ChannelInboundHandler, WriteConnection {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = WebSocketFrame

    private let behaviour: any RealtimeBehaviour
    private let handshake: EventLoopPromise<NIOLoopBound<RealtimeConnection>>
    private var context: ChannelHandlerContext?
    private var flushes = ReadBatchedFlush()
    private var greeted = false
    private var frames: ServerFrameReader
    private var pieces: (remaining: Int, buffer: ByteBuffer)?
    private var nextRequest = 0
    private var calls: [Int: EventLoopPromise<ByteBuffer>] = [:]
    private var masks = Xorshift(seed: 0x9E37_79B9_7F4A_7C15)

    init(behaviour: any RealtimeBehaviour, handshake: EventLoopPromise<NIOLoopBound<RealtimeConnection>>, maxMessageBytes: Int) {
        self.behaviour = behaviour
        self.frames = ServerFrameReader(maxMessageBytes: maxMessageBytes)
        self.handshake = handshake
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        if flushes.readCompleted() { context.flush() }
        context.fireChannelReadComplete()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        handshake.fail(BenchError.connectionClosed("before the handshake"))
        for call in calls.values { call.fail(BenchError.connectionClosed("before a reply")) }
        calls = [:]
        self.context = nil
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handshake.fail(error)
        context.close(promise: nil)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        flushes.readStarted()
        frames.append(unwrapInboundIn(data))
        do {
            // Nothing after the close is acted on, and nothing once the channel has let go.
            while self.context != nil, let item = try frames.next() {
                switch item {
                case .text(let message):
                    receive(message)
                case .ping(let payload):
                    let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: nextMask(), data: payload)
                    context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
                case .close:
                    context.close(promise: nil)
                    return
                }
            }
        } catch {
            errorCaught(context: context, error: error)
        }
    }

    private func receive(_ frame: ByteBuffer) {
        if var collecting = pieces {
            var piece = frame
            collecting.buffer.writeBuffer(&piece)
            collecting.remaining -= 1
            if collecting.remaining == 0 {
                pieces = nil
                deliver(collecting.buffer)
            } else {
                pieces = collecting
            }
            return
        }
        if let count = MessageScan.frameCount(frame) {
            if count > 0 { pieces = (count, ByteBuffer()) }
            return
        }
        deliver(frame)
    }

    private func deliver(_ message: ByteBuffer) {
        if !greeted {
            greeted = true
            handshake.succeed(NIOLoopBound(self, eventLoop: context!.eventLoop))
            behaviour.ready(self)
            return
        }
        if MessageScan.isControlPing(message) {
            send(message: ServerMessage.pong)
            flush()
            return
        }
        if !calls.isEmpty, let response = MessageScan.response(message), let call = calls.removeValue(forKey: response.number) {
            call.succeed(message)
            return
        }
        behaviour.received(message, on: self)
    }

    /// Sends a request whose reply goes to the returned future instead of the behaviour (for
    /// set-up and read-back, off the hot path).
    public func call(_ action: Action) -> EventLoopFuture<ByteBuffer> {
        let promise = eventLoop.makePromise(of: ByteBuffer.self)
        calls[request(action)] = promise
        flush()
        return promise.futureResult
    }

    /// The event loop this connection lives on.
    public var eventLoop: any EventLoop { context!.eventLoop }

    /// The number the next request will carry.
    public var nextRequestNumber: Int { nextRequest + 1 }

    /// Queues a request encoded by the protocol (`ClientMessage`), as every client's is, and
    /// returns its number. For set-up requests: their encoding is not part of what a scenario
    /// measures (timed writes use `request(_:body:)`). Nothing leaves until `flush()`.
    @discardableResult
    public func request(_ action: Action) -> Int {
        nextRequest += 1
        send(message: Array(ClientMessage.request(Request(number: nextRequest, action: action)).encoded.utf8))
        return nextRequest
    }

    /// Listens at `path` with no query and nothing cached.
    @discardableResult
    public func listen(at path: Path) -> Int {
        request(.listen(ListenRequest(path: path, query: .all, tag: nil, hash: "")))
    }

    /// Queues a data request whose body is `body` (JSON text) and returns its request number.
    /// Nothing leaves until `flush()`.
    @discardableResult
    public func request(_ action: StaticString, body: some Collection<UInt8>) -> Int {
        nextRequest += 1
        var message: [UInt8] = []
        message.reserveCapacity(body.count + 40)
        message.append(contentsOf: WireLiterals.numberedDataPrefix)
        WireLiterals.appendDecimal(nextRequest, to: &message)
        message.append(contentsOf: WireLiterals.requestActionKey)
        message.append(contentsOf: UnsafeRawBufferPointer(start: action.utf8Start, count: action.utf8CodeUnitCount))
        message.append(contentsOf: WireLiterals.requestBodyKey)
        message.append(contentsOf: body)
        message.append(contentsOf: "}}".utf8)
        send(message: message)
        return nextRequest
    }

    /// Queues one message, as a frame count and pieces when it is longer than the SDKs' piece limit.
    public func send(message: [UInt8]) {
        guard let context else { return }
        for piece in FrameSplitter.frames(message) {
            let buffer = context.channel.allocator.buffer(bytes: piece)
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, maskKey: nextMask(), data: buffer)), promise: nil)
        }
    }

    /// A fresh masking key per frame from a cheap generator: clients must mask, but the system
    /// generator costs a syscall per frame.
    private func nextMask() -> WebSocketMaskingKey {
        .random(using: &masks)
    }

    /// Gives the behaviour its go signal.
    public func start() {
        behaviour.start(self)
    }

    /// Sends everything queued (at the end of the current read, when called while reading).
    public func flush() {
        if flushes.requested() { context?.flush() }
    }
}
