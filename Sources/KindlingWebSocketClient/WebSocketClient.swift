import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// The client half of a realtime WebSocket: TLS when asked, the HTTP upgrade, then whatever
/// handlers the caller wants on the upgraded channel.
///
/// The SDK, the wire-level test client and the bench each open connections their own way
/// (timeouts, source addresses, receive buffers), but the upgrade is the same for all three, so
/// it is written once here; nothing is added to the upgraded pipeline except what the caller
/// asks for, so the bench's fast path can read the socket's bytes.
package enum WebSocketClient {
    /// What the handlers `upgraded` adds receive.
    package enum Inbound: Sendable {
        /// One `WebSocketFrame` per message, its fragments joined (SwiftNIO's decoder).
        case messages
        /// The socket's bytes, in which the handlers find the frames themselves (the bench,
        /// whose per-frame cost is taken from the server it measures: see `BytesUpgrader`).
        /// Nothing answers a protocol error with a close frame then: the handlers close.
        case bytes
    }

    /// `bootstrap` set up to upgrade each new channel to a WebSocket at `uri`.
    ///
    /// - Parameters:
    ///   - host: the host connected to; with `tls`, the certificate is checked against it.
    ///   - hostHeader: the HTTP `Host` header, usually `host:port`.
    ///   - maxFrameSize: the largest frame accepted from the server (with `.bytes`, the
    ///     caller's handlers check it).
    ///   - inbound: whether `upgraded`'s handlers get messages or the socket's bytes.
    ///   - upgraded: runs on the channel's event loop once the server accepted the upgrade, to add
    ///     the handlers that read frames.
    package static func bootstrap(
        _ bootstrap: ClientBootstrap,
        host: String,
        hostHeader: String,
        uri: String,
        tls: NIOSSLContext? = nil,
        maxFrameSize: Int = 1 << 26,
        inbound: Inbound = .messages,
        upgraded: @escaping @Sendable (any Channel) throws -> Void
    ) -> ClientBootstrap {
        bootstrap.channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                if let tls {
                    try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName(host)))
                }
                let upgrader: any NIOHTTPClientProtocolUpgrader & Sendable
                switch inbound {
                case .messages:
                    upgrader = NIOWebSocketClientUpgrader(
                        maxFrameSize: maxFrameSize,
                        automaticErrorHandling: true,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    NIOWebSocketFrameAggregator(
                                        minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1 << 16,
                                        maxAccumulatedFrameSize: maxFrameSize))
                                try upgraded(channel)
                            }
                        }
                    )
                case .bytes:
                    upgrader = BytesUpgrader(upgraded: upgraded)
                }
                try pipeline.addHTTPClientHandlers(
                    leftOverBytesStrategy: .forwardBytes,
                    withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
                )
                try pipeline.addHandler(WebSocketUpgradeRequest(uri: uri, host: hostHeader))
            }
        }
    }

    /// The name sent in SNI and checked against the certificate; an IP address is not sent (TLS
    /// forbids it) and the certificate is then checked against the address connected to.
    package static func serverName(_ host: String) -> String? {
        host.contains(":") || host.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) ? nil : host
    }
}
