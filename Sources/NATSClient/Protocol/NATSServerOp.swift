import NIOCore

/// One operation read from the server, as the parser yields it.
enum NATSServerOp: Sendable {
    case info(NATSServerInfo)
    case msg(NATSInboundMessage)
    case ping
    case pong
    case ok
    case err(String)
}

/// A MSG or HMSG with the subscription id it was addressed to.
struct NATSInboundMessage: Sendable {
    var sid: UInt64
    var message: NATSMessage
}
