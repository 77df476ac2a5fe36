import Logging
import NIOCore
import NIOSSL

/// Sits right after the TLS handler and keeps TLS-level failures of one connection out of the
/// HTTP and WebSocket handlers' error paths: a client that drops the TCP connection without a
/// TLS close (`uncleanShutdown`, which browsers and SDKs do routinely) is an ordinary close, and
/// a failed handshake (a client that does not trust the certificate) is one debug line. NIOSSL
/// closes the connection itself in both cases.
final class TLSErrorFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case NIOSSLError.uncleanShutdown:
            return
        case NIOSSLError.handshakeFailed, BoringSSLError.sslError, NIOSSLError.readInInvalidTLSState:
            logger.debug("TLS handshake failed: \(error)", metadata: ["peer": "\(context.remoteAddress.map { "\($0)" } ?? "?")"])
            context.close(promise: nil)
        default:
            context.fireErrorCaught(error)
        }
    }
}
