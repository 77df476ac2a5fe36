import Foundation
import NIOCore

/// Writes client operations. Subjects and queue names are validated here, the one place bytes are
/// produced, so nothing a caller passes can split a control line.
enum NATSEncoder {
    /// The CONNECT options this client always sends: quiet (+OK off), headers and no-responders on.
    struct ConnectOptions: Encodable {
        var verbose = false
        var pedantic = false
        var headers = true
        var noResponders = true
        var echo = true
        var lang = "swift"
        var version = "0.1.0"
        var `protocol` = 1
        var name: String?
        var user: String?
        var pass: String?
        var authToken: String?

        enum CodingKeys: String, CodingKey {
            case verbose, pedantic, headers, echo, lang, version, name, user, pass
            case noResponders = "no_responders"
            case `protocol`
            case authToken = "auth_token"
        }
    }

    static func connect(_ options: ConnectOptions, into buffer: inout ByteBuffer) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(options)) ?? Data("{}".utf8)
        buffer.writeString("CONNECT ")
        buffer.writeBytes(json)
        buffer.writeString("\r\n")
    }

    static func ping(into buffer: inout ByteBuffer) { buffer.writeString("PING\r\n") }
    static func pong(into buffer: inout ByteBuffer) { buffer.writeString("PONG\r\n") }

    /// PUB, or HPUB when there are headers.
    static func publish(subject: String, reply: String?, headers: NATSHeaders?, payload: [UInt8], maxPayload: Int, into buffer: inout ByteBuffer)
        throws(NATSError)
    {
        try validate(subject, what: "subject")
        if let reply { try validate(reply, what: "reply subject") }
        let headerBytes = try headers.map { headers throws(NATSError) in try headers.encoded() }
        let total = (headerBytes?.count ?? 0) + payload.count
        guard total <= maxPayload else { throw .maxPayloadExceeded("\(total) bytes > max_payload \(maxPayload)") }
        let replyPart = reply.map { " \($0)" } ?? ""
        if let headerBytes {
            buffer.writeString("HPUB \(subject)\(replyPart) \(headerBytes.count) \(total)\r\n")
            buffer.writeBytes(headerBytes)
        } else {
            buffer.writeString("PUB \(subject)\(replyPart) \(total)\r\n")
        }
        buffer.writeBytes(payload)
        buffer.writeString("\r\n")
    }

    static func subscribe(subject: String, queue: String?, sid: UInt64, into buffer: inout ByteBuffer) throws(NATSError) {
        try validate(subject, what: "subject")
        if let queue {
            try validate(queue, what: "queue group")
            buffer.writeString("SUB \(subject) \(queue) \(sid)\r\n")
        } else {
            buffer.writeString("SUB \(subject) \(sid)\r\n")
        }
    }

    static func unsubscribe(sid: UInt64, into buffer: inout ByteBuffer) {
        buffer.writeString("UNSUB \(sid)\r\n")
    }

    /// A subject is non-empty and has no whitespace or control bytes.
    static func validate(_ subject: String, what: String) throws(NATSError) {
        guard !subject.isEmpty, subject.utf8.allSatisfy({ $0 > 32 && $0 != 127 }) else {
            throw .invalidSubject("\(what) \(subject.debugDescription)")
        }
    }
}
