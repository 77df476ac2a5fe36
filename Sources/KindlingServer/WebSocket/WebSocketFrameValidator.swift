import NIOWebSocket

/// The frames RFC 6455 forbids from a client that SwiftNIO's decoder lets through: an unmasked
/// frame (§5.1), RSV bits without a negotiated extension (§5.2) and reserved opcodes. The
/// session closes the connection with 1002 on the first of them (checked there, not in a
/// handler of its own, so a frame walks one pipeline step fewer).
enum WebSocketFrameValidator {
    /// Why a client may not send `frame`, or nil when it may.
    static func problem(with frame: WebSocketFrame) -> String? {
        if frame.maskKey == nil { return "unmasked client frame" }
        if frame.rsv1 || frame.rsv2 || frame.rsv3 { return "RSV bits set without an extension" }
        switch frame.opcode {
        case .continuation, .text, .binary, .connectionClose, .ping, .pong: return nil
        default: return "reserved opcode"
        }
    }
}
