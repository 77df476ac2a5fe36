import KindlingCore
import Logging
import NIOCore
import NIOHTTP1

/// One REST event stream (`Accept: text/event-stream`) in progress on a connection, living on
/// its event loop.
///
/// The namespace sends it events through an `EventStreamOutbound`; it writes each batch as body
/// chunks and flushes, sends a keep-alive on a timer, and ends the stream with `cancel` (an event
/// over the size limit) or `auth_revoked` (the `auth=` token expired). Bytes not yet taken by the
/// socket are counted; a reader further behind than the limit is disconnected, as on the
/// realtime side.
final class EventStream {
    let id = ConnectionID.next()
    private let context: ChannelHandlerContext
    private let maxPendingBytes: Int
    private let maxEventBytes: Int
    private let logger: Logger
    private let metrics: ServerMetrics
    /// The stream's id and namespace, for its log lines.
    private let metadata: Logger.Metadata
    private var pendingBytes = 0
    private var keepAlive: RepeatedTask?
    private var expiry: Scheduled<Void>?
    private var ended = false
    /// Events that came before the response head was written (the namespace answers the open
    /// after sending the first event); written by `start`.
    private var waiting: [ByteBuffer]? = []
    /// Budget held for `waiting` (the first event), let go once the socket has taken it.
    private var waitingHolds: [BudgetHold] = []

    init(context: ChannelHandlerContext, namespace: String, connection: ConnectionID, metrics: ServerMetrics, configuration: ServerConfiguration) {
        self.context = context
        self.metrics = metrics
        self.metadata = ["stream": "\(id)", "connection": "\(connection)", "namespace": "\(namespace)"]
        self.maxPendingBytes = configuration.maxPendingOutboundBytes
        self.maxEventBytes = configuration.maxEventBytes
        self.logger = configuration.logger
    }

    /// Starts the timers: keep-alives every `interval`, and the revocation at `expiresAt` (Unix
    /// milliseconds) when the stream's token has an expiry in the future.
    func start(keepAliveEvery interval: Duration, expiresAt: Int64?) {
        if let early = waiting {
            waiting = nil
            write(early, holding: waitingHolds)
            waitingHolds = []
        }
        let amount = TimeAmount.nanoseconds(
            max(1_000_000, Int64(interval.components.seconds) * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000))
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        keepAlive = context.eventLoop.scheduleRepeatedTask(initialDelay: amount, delay: amount) { _ in
            bound.value.write([ByteBuffer(bytes: EventStreamEncoding.keepAlive)])
        }
        if let expiresAt {
            let delay = expiresAt - Namespace.now()
            if delay > 0 {
                expiry = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(delay)) {
                    self.end(with: EventStreamEncoding.authRevoked)
                }
            }
        }
    }

    /// Writes events as they are and flushes; `holds` are let go once the socket has taken
    /// them (or the stream ended).
    func write(_ chunks: [ByteBuffer], holding holds: [BudgetHold] = []) {
        guard !ended, !chunks.isEmpty else { return }
        if waiting != nil {
            waiting!.append(contentsOf: chunks)
            waitingHolds.append(contentsOf: holds)
            return
        }
        if chunks.contains(where: { $0.readableBytes > maxEventBytes }) {
            end(with: EventStreamEncoding.cancel)
            return
        }
        let size = chunks.reduce(0) { $0 + $1.readableBytes }
        pendingBytes += size
        for chunk in chunks.dropLast() {
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(chunk))), promise: nil)
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { _ in
            self.pendingBytes -= size
            withExtendedLifetime(holds) {}
        }
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(chunks[chunks.count - 1]))), promise: promise)
        if pendingBytes > maxPendingBytes {
            logger.warning("disconnecting an event-stream reader that fell behind: more than \(maxPendingBytes) bytes waiting", metadata: metadata)
            metrics.slowReaderDisconnected()
            ended = true
            shutDown()
            context.close(promise: nil)
        }
    }

    /// Sends a last event, ends the response and closes the connection.
    func end(with last: [UInt8]) {
        guard !ended else { return }
        ended = true
        shutDown()
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: last)))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).assumeIsolated().whenComplete { _ in
            self.context.close(promise: nil)
        }
    }

    /// Stops sending: the connection went away.
    func stop() {
        ended = true
        shutDown()
    }

    /// Stops the timers and lets go of what waited for the head: once ended, nothing more is
    /// written.
    private func shutDown() {
        waiting = nil
        waitingHolds = []
        keepAlive?.cancel()
        keepAlive = nil
        expiry?.cancel()
        expiry = nil
    }
}
