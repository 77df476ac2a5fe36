import Logging
import NIOCore
import NIOHTTP1

/// Counts each request body against the server-wide `InFlightBudget` as it arrives, and gives
/// the bytes back when the response ends (the body is held until then) or the connection
/// closes, unless a parse of the body took them over (`handOverBody`). A body that would exceed
/// the budget now is answered 503 (nothing was written, so a retry is safe), and one over half
/// of it, which never could fit beside its parse, 413; either way with a log line. Then the
/// output side closes, and the rest of the body is read and dropped here before the connection
/// closes: a client that sends its whole body before it reads (Python's http.client and
/// requests, which firebase-admin uses) would otherwise find the connection reset, because a
/// socket closed with bytes unread answers them with a reset, and a reset makes the client's
/// kernel throw away the answer it had not read yet.
final class HTTPBodyBudgetHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let budget: InFlightBudget
    private let logger: Logger
    private var reserved = 0
    private var intake = Intake.counting

    /// Whether bodies are counted, or one was refused and the rest of it is being dropped.
    private enum Intake {
        case counting
        /// The refusal is written and the output closing (`answered`); the connection closes
        /// once the body has ended, or the body timeout (`HTTPTimeoutHandler`) closes it.
        case refused(answered: EventLoopFuture<Void>)
    }

    init(budget: InFlightBudget, logger: Logger) {
        self.budget = budget
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .refused(let answered) = intake {
            if case .end = unwrapInboundIn(data) { answered.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
            return
        }
        switch unwrapInboundIn(data) {
        case .head(let head):
            // A length too large for `Int` parses as nil: its chunks are then counted as they come.
            if let declared = head.headers.first(name: "content-length"), let length = Int(declared), length > neverFits {
                return refuseForGood(context: context)
            }
        case .body(let chunk):
            guard chunk.readableBytes <= neverFits - reserved else { return refuseForGood(context: context) }
            guard budget.reserve(chunk.readableBytes) else { return refuse(context: context) }
            reserved += chunk.readableBytes
        case .end: break
        }
        context.fireChannelRead(data)
    }

    /// A body larger than this could never be taken, even by an idle server: parsing it takes
    /// at least as much again as its text, within the same budget.
    private var neverFits: Int { budget.limit / 2 }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { giveBack() }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        giveBack()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { giveBack() }

    /// Hands what the current request's body holds of the budget to the work that parses it,
    /// which goes on if the client hangs up: given back when that work lets go of it, not when
    /// the connection closes.
    func handOverBody() -> BudgetHold? {
        guard reserved > 0 else { return nil }
        defer { reserved = 0 }
        return BudgetHold(taken: reserved, from: budget)
    }

    private func giveBack() {
        budget.release(reserved)
        reserved = 0
    }

    /// A body no wait would make room for: 413, so the client does not retry it.
    private func refuseForGood(context: ChannelHandlerContext) {
        giveBack()
        logger.warning("refusing a request body larger than half of --max-unfinished-mb (\(budget.limit) bytes)")
        intake = .refused(
            answered: HTTPErrorReply.refuseBody(
                .payloadTooLarge, "Request body exceeds the \(neverFits)-byte limit the server's --max-unfinished-mb allows", context: context))
        context.fireUserInboundEventTriggered(HTTPBodyRefused())
    }

    private func refuse(context: ChannelHandlerContext) {
        giveBack()
        logger.warning("refusing a request body: the server already holds \(budget.inUse) bytes of unfinished requests (limit \(budget.limit))")
        intake = .refused(
            answered: HTTPErrorReply.refuseBody(
                .serviceUnavailable, "The server is holding too many unfinished requests; retry later", headers: [("Retry-After", "1")],
                context: context))
        context.fireUserInboundEventTriggered(HTTPBodyRefused())
    }
}
