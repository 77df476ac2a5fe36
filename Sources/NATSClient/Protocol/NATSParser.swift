import Foundation
import NIOCore

/// The byte-level parser for server operations. It reads from a cumulation buffer, returns nil
/// when it needs more bytes, and throws on anything malformed: every size is checked against the
/// limit before it is used, so a hostile or broken peer can neither trap nor make it buffer
/// without bound.
struct NATSParser {
    /// The longest control line accepted; INFO with a long connect_urls list is the largest.
    static let maxControlLine = 64 * 1024
    /// Room for headers the server adds to a stored message (JetStream's Nats-* headers) on top of
    /// what a publisher could send.
    static let serverHeaderAllowance = 64 * 1024

    /// The largest body accepted: max_payload from INFO plus the allowance.
    private(set) var bodyLimit: Int = 1_048_576 + serverHeaderAllowance
    private var pending: PendingBody?

    private struct PendingBody {
        var subject: String
        var sid: UInt64
        var reply: String?
        var headerSize: Int
        var totalSize: Int
    }

    /// Adopts the limit the server announced.
    mutating func setMaxPayload(_ maxPayload: Int) {
        bodyLimit = max(0, min(maxPayload, Int(Int32.max))) + Self.serverHeaderAllowance
    }

    /// The next complete operation, or nil when the buffer holds only part of one.
    mutating func next(_ buffer: inout ByteBuffer) throws(NATSProtocolError) -> NATSServerOp? {
        if let body = pending {
            return try readBody(body, &buffer)
        }
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: 10) else {
            if view.count > Self.maxControlLine { throw .controlLineTooLong("\(view.count) bytes without CRLF") }
            return nil
        }
        let lineLength = newline - view.startIndex
        guard lineLength <= Self.maxControlLine else { throw .controlLineTooLong("\(lineLength) bytes") }
        guard var line = buffer.readBytes(length: lineLength + 1) else { return nil }
        line.removeLast()
        if line.last == 13 { line.removeLast() }
        let op = try parseControlLine(line[...])
        if let body = pending {
            return try readBody(body, &buffer)
        }
        return op
    }

    private mutating func parseControlLine(_ line: ArraySlice<UInt8>) throws(NATSProtocolError) -> NATSServerOp? {
        let nameEnd = line.firstIndex { $0 == 32 || $0 == 9 } ?? line.endIndex
        let name = String(decoding: line[line.startIndex..<nameEnd], as: UTF8.self).uppercased()
        let rest = line[nameEnd..<line.endIndex]
        switch name {
        case "PING": return .ping
        case "PONG": return .pong
        case "+OK": return .ok
        case "-ERR":
            var text = String(decoding: rest, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("'"), text.hasSuffix("'"), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
            return .err(text)
        case "INFO":
            do {
                let info = try JSONDecoder().decode(NATSServerInfo.self, from: Data(rest))
                return .info(info)
            } catch {
                throw .malformedInfo("\(error)")
            }
        case "MSG":
            let args = Self.split(rest)
            guard args.count == 3 || args.count == 4 else { throw .malformedArguments("MSG with \(args.count) arguments") }
            let size = try parseSize(args[args.count - 1])
            pending = PendingBody(
                subject: String(decoding: args[0], as: UTF8.self), sid: try parseSID(args[1]),
                reply: args.count == 4 ? String(decoding: args[2], as: UTF8.self) : nil, headerSize: 0, totalSize: size)
            return nil
        case "HMSG":
            let args = Self.split(rest)
            guard args.count == 4 || args.count == 5 else { throw .malformedArguments("HMSG with \(args.count) arguments") }
            let headerSize = try parseSize(args[args.count - 2])
            let totalSize = try parseSize(args[args.count - 1])
            guard headerSize <= totalSize else { throw .sizeOutOfRange("header size \(headerSize) > total \(totalSize)") }
            pending = PendingBody(
                subject: String(decoding: args[0], as: UTF8.self), sid: try parseSID(args[1]),
                reply: args.count == 5 ? String(decoding: args[2], as: UTF8.self) : nil, headerSize: headerSize, totalSize: totalSize)
            return nil
        default:
            throw .unknownOperation(String(name.prefix(16)))
        }
    }

    private mutating func readBody(_ body: PendingBody, _ buffer: inout ByteBuffer) throws(NATSProtocolError) -> NATSServerOp? {
        guard buffer.readableBytes >= body.totalSize + 2 else { return nil }
        guard let bytes = buffer.readBytes(length: body.totalSize), let terminator = buffer.readBytes(length: 2) else { return nil }
        guard terminator == [13, 10] else { throw .missingPayloadTerminator() }
        pending = nil
        var headers: NATSHeaders?
        if body.headerSize > 0 {
            headers = try NATSHeaders.decode(bytes[0..<body.headerSize])
        }
        let message = NATSMessage(subject: body.subject, reply: body.reply, headers: headers, payload: Array(bytes[body.headerSize...]))
        return .msg(NATSInboundMessage(sid: body.sid, message: message))
    }

    private func parseSize(_ digits: ArraySlice<UInt8>) throws(NATSProtocolError) -> Int {
        guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw .sizeOutOfRange("not a size: \(String(decoding: digits.prefix(16), as: UTF8.self))")
        }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - 48) }
        guard value <= bodyLimit else { throw .sizeOutOfRange("\(value) > \(bodyLimit)") }
        return value
    }

    private func parseSID(_ digits: ArraySlice<UInt8>) throws(NATSProtocolError) -> UInt64 {
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw .malformedArguments("bad subscription id")
        }
        return digits.reduce(0) { $0 * 10 + UInt64($1 - 48) }
    }

    private static func split(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        bytes.split(whereSeparator: { $0 == 32 || $0 == 9 })
    }
}
