import Crypto
import Foundation
import NIOCore

/// What both floors (`FloorHandler` on SwiftNIO, `EpollFloorServer` on bare epoll) say on the
/// wire, so the two differ only in their I/O: the WebSocket handshake, masked client frames in,
/// `ok` answers and data events out.
enum FloorWire {
    /// What a request asked for, beyond its `ok`.
    enum Request {
        /// Nothing more.
        case other
        /// A listen (`"a":"q"`): the connection hears every later put.
        case listen
        /// A put (`"a":"p"`): `event`, one frame shared by every listener, goes to the others.
        case put(event: ByteBuffer)
    }

    /// The 101 answer and the protocol's hello once the whole request head is in (RFC 6455
    /// §4.2.2), taking the head from `received`; nil until it is whole. By hand rather than with
    /// SwiftNIO's HTTP upgrade, whose WebSocket frame decoder and encoder would stay in the
    /// pipeline: after the handshake a floor's own reader is all there is, as a floor must be.
    static func handshake(_ received: inout ByteBuffer) -> ByteBuffer? {
        let view = received.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
        received.moveReaderIndex(to: end.upperBound)
        let key =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }.map { $0.dropFirst(18).trimmingPrefix(" ") } ?? ""
        let accept = Data(Insecure.SHA1.hash(data: Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
        var reply = ByteBuffer(
            string: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n")
        Array(#"{"t":"c","d":{"t":"h","d":{"ts":0,"v":"5","h":"floor","s":"floor"}}}"#.utf8).withUnsafeBytes { Self.frame($0, into: &reply) }
        return reply
    }

    /// Takes every whole masked client frame at the start of `bytes` (`nextFrame`), in order;
    /// how many bytes they took.
    static func frames(in bytes: UnsafeRawBufferPointer, _ take: (UnsafeRawBufferPointer) -> Void) -> Int {
        var used = 0
        while let length = nextFrame(in: UnsafeRawBufferPointer(rebasing: bytes[used...]), take) { used += length }
        return used
    }

    /// Takes the whole masked client frame at the start of `bytes`: hands its payload, unmasked
    /// into scratch room (as `kindling serve` reads them), to `take`, and returns its length; nil
    /// until one is whole.
    static func nextFrame(in bytes: UnsafeRawBufferPointer, _ take: (UnsafeRawBufferPointer) -> Void) -> Int? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7f)
        var header = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            header = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            let long = (2..<10).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[$1]) }
            guard long < 1 << 24 else { return nil }
            length = Int(long)
            header = 10
        }
        guard bytes.count >= header + 4 + length else { return nil }
        let mask = bytes.loadUnaligned(fromByteOffset: header, as: UInt32.self)
        let masked = UnsafeRawBufferPointer(rebasing: bytes[(header + 4)..<(header + 4 + length)])
        withUnsafeTemporaryAllocation(byteCount: max(length, 1), alignment: 8) { scratch in
            for index in 0..<length { scratch[index] = masked[index] ^ UInt8(truncatingIfNeeded: mask >> (UInt32(index & 3) * 8)) }
            take(UnsafeRawBufferPointer(rebasing: scratch[0..<length]))
        }
        return header + 4 + length
    }

    /// Appends the `ok` answer to `payload` to `out` and says what else it asked for.
    static func answer(_ payload: UnsafeRawBufferPointer, into out: inout ByteBuffer) -> Request {
        // At most 19 digits (an Int's), so the answer stays a frame with a one-byte length.
        let digits =
            Self.end(of: Self.number, in: payload).map { payload[$0...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.prefix(19) }
            ?? []
        out.writeInteger(UInt8(0x81))
        out.writeInteger(UInt8(Self.answerHead.count + digits.count + Self.answerTail.count))
        out.writeBytes(Self.answerHead)
        out.writeBytes(digits)
        out.writeBytes(Self.answerTail)
        guard let action = Self.end(of: Self.action, in: payload), action < payload.count else { return .other }
        if payload[action] == UInt8(ascii: "q") { return .listen }
        guard payload[action] == UInt8(ascii: "p"), let body = Self.end(of: Self.body, in: payload), body + 2 <= payload.count else { return .other }
        // The put's body as a data event: the SDKs' envelope ends with the body and then closes
        // `d` and the message. One frame for every listener, as Kindling's fan-out shares one.
        var event = Self.eventHead
        event += payload[body..<(payload.count - 2)]
        event += Self.eventTail
        var frame = ByteBuffer()
        event.withUnsafeBytes { Self.frame($0, into: &frame) }
        return .put(event: frame)
    }

    /// Appends an unmasked final text frame holding `payload`.
    static func frame(_ payload: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(0x81))
        if payload.count < 126 {
            buffer.writeInteger(UInt8(payload.count))
        } else if payload.count < 65_536 {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(payload.count))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(payload.count))
        }
        buffer.writeBytes(payload)
    }

    private static let number = Array(#""r":"#.utf8)
    private static let action = Array(#""a":""#.utf8)
    private static let body = Array(#""b":"#.utf8)
    private static let eventHead = Array(#"{"t":"d","d":{"a":"d","b":"#.utf8)
    private static let eventTail = Array("}}".utf8)
    private static let answerHead = Array(#"{"t":"d","d":{"r":"#.utf8)
    private static let answerTail = Array(#","b":{"s":"ok","d":""}}}"#.utf8)

    /// Where `marker` ends in `payload`, by a plain byte search.
    private static func end(of marker: [UInt8], in payload: UnsafeRawBufferPointer) -> Int? {
        guard payload.count >= marker.count else { return nil }
        for start in 0...(payload.count - marker.count) where payload[start] == marker[0] {
            var matched = 1
            while matched < marker.count, payload[start + matched] == marker[matched] { matched += 1 }
            if matched == marker.count { return start + matched }
        }
        return nil
    }
}
