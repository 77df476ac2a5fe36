import KindlingServer
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// The floor's connections that listen, and those with frames to flush this loop turn; confined
/// to the one event loop its connections share (`FloorServer` has no other), hence unchecked.
public final class FloorHub: @unchecked Sendable {
    var listeners: [FloorHandler] = []
    var dirty: [FloorHandler] = []
    var flushQueued = false
    /// How many connections found their socket to write directly (`directWrites`): one that
    /// cannot writes through the pipeline, and the floor is then not the one asked for.
    public internal(set) var directSockets = 0
    #if os(Linux)
    /// With `--io nio-watched`: tells the loop which sockets to read itself (`readSocket`).
    var watcher: ReadinessWatcher?
    #endif
    /// How many connections read their socket themselves (`watcher`).
    public internal(set) var watchedSockets = 0
    /// The connections `watcher` watches, by the token it names them with.
    var watched: [UInt64: FloorHandler] = [:]
    var nextToken: UInt64 = 0
    /// Where a watched socket's reads land first; only the start of a frame not yet whole is kept.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)

    public init() {}

    deinit { scratch.deallocate() }

    /// Reads each watched connection `tokens` names (on the loop).
    func ready(_ tokens: [UInt64]) {
        for token in tokens { watched[token]?.readSocket() }
    }
}

/// One connection of the floor server (`FloorServer`): the WebSocket handshake, then each masked
/// text frame unmasked, answered `ok` with its request number, and, for a put (`"a":"p"`),
/// its body sent as a data event to every connection that listened (`"a":"q"`). Confined to the
/// hub's event loop.
///
/// With `directWrites`, what it sends goes to the socket with `write(2)` (`DirectSocketOutput`,
/// as Kindling's plaintext sessions write) and only what the socket does not take goes through
/// the pipeline, behind which later bytes then wait: the floor under Kindling's own I/O path,
/// where only the reads pass through SwiftNIO's channel.
public final class FloorHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private let hub: FloorHub
    private var context: ChannelHandlerContext?
    private var received = ByteBuffer()
    private var upgraded = false
    private var out: ByteBuffer?
    private let directWrites: Bool
    /// The socket, once upgraded, when `directWrites`.
    private var direct: DirectSocketOutput?
    /// Writes handed to the pipeline and not yet done: while any is, bytes go after them.
    private var pipelineWrites = 0
    /// Its name to the hub's watcher, once it reads its socket itself.
    private var token: UInt64?

    public init(hub: FloorHub, directWrites: Bool = false) {
        self.hub = hub
        self.directWrites = directWrites
    }

    public func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    public func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    public func channelInactive(context: ChannelHandlerContext) {
        hub.listeners.removeAll { $0 === self }
        if let token { hub.watched[token] = nil }
        context.fireChannelInactive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if upgraded {
            bytes.withUnsafeReadableBytes { takeRead($0) }
            return
        }
        received.writeBuffer(&bytes)
        guard let reply = FloorWire.handshake(&received) else { return }
        upgraded = true
        send(reply, context: context)
        if directWrites {
            direct = DirectSocketOutput(channel: context.channel)
            if direct != nil { hub.directSockets += 1 }
        }
        watch(context: context)
        takeFrames(from: &received)
        if received.readableBytes == 0 { received.clear() }
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        if let out {
            self.out = nil
            send(out, context: context)
        }
    }

    /// With the hub's watcher: reads the socket itself from now on (SwiftNIO's reading off).
    private func watch(context: ChannelHandlerContext) {
        #if os(Linux)
        guard let watcher = hub.watcher, let direct else { return }
        let token = hub.nextToken
        hub.nextToken += 1
        do {
            try context.channel.syncOptions?.setOption(.autoRead, value: false)
        } catch {
            return
        }
        self.token = token
        hub.watched[token] = self
        hub.watchedSockets += 1
        if !watcher.watch(direct.descriptor, token: token) { context.close(promise: nil) }
        #endif
    }

    /// Reads what the socket holds (the watcher said it has bytes), answers it, and sends.
    func readSocket() {
        #if os(Linux)
        guard let context, let direct else { return }
        let scratch = hub.scratch
        while true {
            let count = Glibc.read(direct.descriptor, scratch.baseAddress, scratch.count)
            if count > 0 {
                takeRead(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
                if count < scratch.count { break }
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno == EAGAIN {
                break
            } else {
                context.close(promise: nil)
                return
            }
        }
        channelReadComplete(context: context)
        #endif
    }

    /// Takes `bytes`, read after the handshake (by SwiftNIO or by `readSocket`): frames are
    /// read where they arrived, and only the start of one not yet whole is kept.
    private func takeRead(_ bytes: UnsafeRawBufferPointer) {
        if received.readableBytes == 0 {
            let used = FloorWire.frames(in: bytes) { take($0) }
            if used < bytes.count { received.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[used...])) }
            return
        }
        received.writeBytes(bytes)
        takeFrames(from: &received)
        if received.readableBytes == 0 { received.clear() }
    }

    /// Writes `bytes` to the socket itself when nothing waits in the pipeline, and the rest
    /// through the pipeline.
    private func send(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        var bytes = bytes
        if let direct, pipelineWrites == 0, direct.write(&bytes) == .all { return }
        let written = context.eventLoop.makePromise(of: Void.self)
        pipelineWrites += 1
        written.futureResult.assumeIsolated().whenComplete { _ in self.pipelineWrites -= 1 }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: written)
    }

    /// Takes every whole frame at the start of `buffer`.
    private func takeFrames(from buffer: inout ByteBuffer) {
        buffer.moveReaderIndex(forwardBy: buffer.withUnsafeReadableBytes { FloorWire.frames(in: $0) { take($0) } })
    }

    /// Answers one request and, for a put, queues its event to every listener.
    private func take(_ payload: UnsafeRawBufferPointer) {
        // Taken out while written, so the buffer is not copied.
        var answers = out ?? ByteBuffer()
        out = nil
        let request = FloorWire.answer(payload, into: &answers)
        out = answers
        switch request {
        case .other:
            break
        case .listen:
            hub.listeners.append(self)
        case .put(let event):
            for listener in hub.listeners where listener !== self { listener.deliver(event) }
        }
    }

    /// Queues `frame` to be written at the end of the loop turn; the first one waiting is kept as
    /// it is (its storage shared with every other listener's).
    private func deliver(_ frame: ByteBuffer) {
        guard out == nil else {
            out?.writeImmutableBuffer(frame)
            return
        }
        out = frame
        hub.dirty.append(self)
        guard !hub.flushQueued, let loop = context?.eventLoop else { return }
        hub.flushQueued = true
        loop.execute { [hub] in
            hub.flushQueued = false
            let dirty = hub.dirty
            hub.dirty = []
            for handler in dirty { handler.flush() }
        }
    }

    private func flush() {
        guard let context, let out else { return }
        self.out = nil
        send(out, context: context)
    }
}
