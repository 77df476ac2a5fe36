import NIOCore

/// The minimal RESP client on the same NIO machinery as `RealtimeConnection`: commands are
/// written into the channel and flushed in batches, replies parsed as they arrive and handed to
/// the behaviour on the event loop.
public final class RedisConnection: ChannelInboundHandler, WriteConnection {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private let behaviour: any RedisBehaviour
    private let opened: EventLoopPromise<NIOLoopBound<RedisConnection>>
    private var context: ChannelHandlerContext?
    private var flushes = ReadBatchedFlush()
    private var pending = ByteBuffer()
    private var started = false

    init(behaviour: any RedisBehaviour, opened: EventLoopPromise<NIOLoopBound<RedisConnection>>) {
        self.behaviour = behaviour
        self.opened = opened
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        opened.succeed(NIOLoopBound(self, eventLoop: context.eventLoop))
        behaviour.ready(self)
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        if flushes.readCompleted() { context.flush() }
        context.fireChannelReadComplete()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        opened.fail(BenchError.connectionClosed("to redis before it opened"))
        self.context = nil
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        opened.fail(error)
        context.close(promise: nil)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        flushes.readStarted()
        var bytes = unwrapInboundIn(data)
        if pending.readableBytes == 0 {
            pending = bytes
        } else {
            pending.writeBuffer(&bytes)
        }
        do {
            while let value = try RESPParser.next(&pending) {
                behaviour.received(value, on: self)
            }
        } catch {
            context.fireErrorCaught(error)
            context.close(promise: nil)
        }
        if pending.readableBytes == 0 { pending.clear() }
    }

    /// The event loop this connection lives on.
    public var eventLoop: any EventLoop { context!.eventLoop }

    /// Queues one command; nothing leaves until `flush()`.
    public func command(_ parts: [UInt8]...) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: parts.reduce(16) { $0 + $1.count + 16 })
        RESPParser.command(parts, into: &buffer)
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    /// Gives the behaviour its go signal.
    public func start() {
        behaviour.start(self)
    }

    public func flush() {
        if flushes.requested() { context?.flush() }
    }
}
