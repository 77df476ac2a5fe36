import KindlingCore
import Logging
import NIOCore
import NIOHTTP1

/// One profiler stream (`GET /.settings/profile.json`) on its connection, living on its event
/// loop: the records its namespace sends, written as server-sent events, and a keep-alive on a
/// timer.
///
/// Unlike a data event stream, a reader that falls behind is not disconnected, and never slows
/// the server: while its socket takes nothing more (the channel is not writable) the records
/// that come are left out and counted, and what goes out next starts with a `gap` event saying
/// how many. What the stream can hold is bounded by the channel's write buffer and the
/// backlog's limit of records on their way (`ProfileBacklog`).
final class ProfileStream {
    let id = ConnectionID.next()
    let backlog = ProfileBacklog(limit: ProfileStream.maxRecordsOnTheirWay)
    /// Records on their way to one stream at most: about 3 MB of a busy namespace's records
    /// (their size is bounded by a path's).
    static let maxRecordsOnTheirWay = 10_000

    /// Before its response head, the records that came are held (still counted on their way);
    /// then they are written as they come, until the stream ends.
    private enum Phase {
        case opening([[ProfileRecord]])
        case streaming
        case ended
    }

    private var phase = Phase.opening([])
    private let context: ChannelHandlerContext
    private let logger: Logger
    private let metadata: Logger.Metadata
    private var keepAlive: RepeatedTask?
    /// Bounds the log lines about records left out to one a second.
    private var gapLines = LinesPerSecond(limit: 1)

    init(context: ChannelHandlerContext, namespace: String, connection: ConnectionID, logger: Logger) {
        self.context = context
        self.logger = logger
        self.metadata = ["profiler": "\(id)", "connection": "\(connection)", "namespace": "\(namespace)"]
    }

    /// The head is written: sends what came meanwhile, then keep-alives every `interval`.
    func start(keepAliveEvery interval: Duration) {
        guard case .opening(let held) = phase else { return }
        phase = .streaming
        for records in held { write(records) }
        let amount = max(TimeAmount(interval), .milliseconds(1))
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        keepAlive = context.eventLoop.scheduleRepeatedTask(initialDelay: amount, delay: amount) { _ in
            bound.value.send(EventStreamEncoding.keepAlive, records: 0)
        }
    }

    /// Writes `records` as `log` events, or leaves them out while the socket takes nothing.
    func write(_ records: [ProfileRecord]) {
        switch phase {
        case .ended:
            backlog.done(records.count)
        case .opening(var held):
            phase = .streaming  // so the array is not shared while it grows
            held.append(records)
            phase = .opening(held)
        case .streaming:
            guard context.channel.isWritable else {
                backlog.drop(records.count)
                return
            }
            send(ProfileRecord.events(records), records: records.count)
        }
    }

    /// Writes `bytes`, after a `gap` event when records were left out since the last write;
    /// `records` of them are off the backlog once the socket has taken them.
    private func send(_ bytes: [UInt8], records: Int) {
        guard case .streaming = phase else { return }
        var bytes = bytes
        let dropped = backlog.takeDropped()
        if dropped > 0 {
            bytes = ProfileRecord.gap(dropped: dropped, timestamp: Namespace.now()) + bytes
            if let skipped = gapLines.take() {
                var metadata = self.metadata
                if skipped > 0 { metadata["unlogged-gaps"] = "\(skipped)" }
                logger.notice("a profiler reads more slowly than its namespace makes records: \(dropped) were left out", metadata: metadata)
            }
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        let backlog = self.backlog
        promise.futureResult.whenComplete { _ in backlog.done(records) }
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: bytes)))), promise: promise)
    }

    /// Stops sending: the connection went away.
    func stop() {
        if case .opening(let held) = phase { backlog.done(held.reduce(0) { $0 + $1.count }) }
        phase = .ended
        keepAlive?.cancel()
        keepAlive = nil
    }
}
