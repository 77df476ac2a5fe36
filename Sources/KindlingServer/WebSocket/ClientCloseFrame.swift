import NIOWebSocket

/// The answer to a client's close frame (RFC 6455 §5.5.1, §7.4). A valid close is echoed with
/// its own code (1000 when it gave none); a payload no endpoint may send is answered 1002 (one
/// byte, or a code that is reserved or must never be put on the wire) or 1007 (a reason that is
/// not UTF-8), so a broken client learns what it did wrong.
enum ClientCloseFrame {
    static func reply(to payload: UnsafeRawBufferPointer) -> (code: WebSocketErrorCode, reason: String) {
        guard !payload.isEmpty else { return (.normalClosure, "client closed") }
        guard payload.count >= 2 else { return (.protocolError, "close frame with a one-byte payload") }
        let code = Int(payload[0]) << 8 | Int(payload[1])
        guard isSendable(code) else { return (.protocolError, "close code \(code) may not be sent") }
        guard String(validating: UnsafeRawBufferPointer(rebasing: payload[2...]), as: UTF8.self) != nil else {
            return (.dataInconsistentWithMessage, "close reason is not valid UTF-8")
        }
        return (WebSocketErrorCode(codeNumber: code), "client closed")
    }

    /// Codes an endpoint may put in a close frame: those RFC 6455 and the IANA registry define
    /// (1000–1003, 1007–1014) and the ranges left to libraries and applications (3000–4999).
    /// 1004 is reserved, and 1005, 1006 and 1015 only ever describe a close locally.
    static func isSendable(_ code: Int) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
