import KindlingCore
import Logging
import NIOCore
import NIOHTTP1

/// Counts each request body against the server-wide `InFlightBudget` as it arrives, and gives
/// the bytes back when the response ends (the body is held until then) or the connection
/// closes. A body that would exceed the budget is answered 503 (nothing was written, so a
/// retry is safe) and the connection closed, with a log line.
///
/// Parsing a body costs far more memory than its bytes: a body of many small values takes about
/// 14 times its size as parsed values and tree nodes (55 MB of small objects peaked near 800 MB).
/// So once a body is whole, what parsing it will take is reserved too, before it is parsed:
/// `parseBytesPerValue` for each value it can hold (`JSONValueCount`, counted as the bytes pass).
/// A body whose parse could never fit the budget is answered 413; one that does not fit now,
/// 503. Otherwise a client whose write the rules deny could still make the server hold
/// gigabytes by sending a few large bodies at once.
final class HTTPBodyBudgetHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// Memory reserved for each value a body may hold while it is parsed and decided: a value
    /// and its tree node take about that much (calibrated by the peak resident size of a server
    /// parsing 55 MB of small objects: 6.0 M values counted, 720–800 MB).
    static let parseBytesPerValue = 128

    private let budget: InFlightBudget
    private let logger: Logger
    private var reserved = 0
    private var refusing = false
    /// The values the body received so far may hold.
    private var values = JSONValueCount()

    init(budget: InFlightBudget, logger: Logger) {
        self.budget = budget
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refusing else { return }
        switch unwrapInboundIn(data) {
        case .head:
            values = JSONValueCount()
        case .body(let chunk):
            guard budget.reserve(chunk.readableBytes) else {
                refuse(context: context)
                return
            }
            reserved += chunk.readableBytes
            chunk.withUnsafeReadableBytes { values.add($0) }
        case .end:
            // At most the body's bytes over 1 (the 256 MB body limit), so the product fits an Int.
            let parsing = values.upperBound * Self.parseBytesPerValue
            values = JSONValueCount()
            guard parsing <= budget.limit else {
                refuseParsing(parsing, context: context)
                return
            }
            guard budget.reserve(parsing) else {
                refuse(context: context)
                return
            }
            reserved += parsing
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { giveBack() }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        giveBack()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { giveBack() }

    private func giveBack() {
        budget.release(reserved)
        reserved = 0
    }

    /// A body that holds more values than the server could ever parse at once.
    private func refuseParsing(_ bytes: Int, context: ChannelHandlerContext) {
        refusing = true
        giveBack()
        let megabytes = { (bytes: Int) in (bytes + (1 << 20) - 1) >> 20 }
        logger.warning("refusing a request body: parsing it would take about \(megabytes(bytes)) MB, more than the \(megabytes(budget.limit)) MB limit")
        HTTPErrorReply.sendAndClose(
            .payloadTooLarge,
            "Parsing this request body would take about \(megabytes(bytes)) MB, more than the server's \(megabytes(budget.limit)) MB "
                + "for requests in progress (--max-unfinished-mb); send the data in smaller writes",
            context: context)
    }

    private func refuse(context: ChannelHandlerContext) {
        refusing = true
        giveBack()
        logger.warning("refusing a request body: the server already holds \(budget.inUse) bytes of unfinished requests (limit \(budget.limit))")
        HTTPErrorReply.sendAndClose(
            .serviceUnavailable, "The server is holding too many unfinished requests; retry later", headers: [("Retry-After", "1")], context: context)
    }
}
