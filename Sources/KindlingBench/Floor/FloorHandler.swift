import Crypto
import Foundation
import NIOCore

/// The floor's connections that listen, and those with frames to flush this loop turn; confined
/// to the one event loop its connections share (`FloorServer` has no other), hence unchecked.
public final class FloorHub: @unchecked Sendable {
    var listeners: [FloorHandler] = []
    var dirty: [FloorHandler] = []
    var flushQueued = false

    public init() {}
}

/// One connection of the floor server (`FloorServer`): the WebSocket handshake, then each masked
/// text frame unmasked, answered `ok` with its request number, and, for a put (`"a":"p"`),
/// its body sent as a data event to every connection that listened (`"a":"q"`). Confined to the
/// hub's event loop.
public final class FloorHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private let hub: FloorHub
    private var context: ChannelHandlerContext?
    private var received = ByteBuffer()
    private var upgraded = false
    private var out: ByteBuffer?

    public init(hub: FloorHub) { self.hub = hub }

    public func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    public func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    public func channelInactive(context: ChannelHandlerContext) {
        hub.listeners.removeAll { $0 === self }
        context.fireChannelInactive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        // Frames are read where they arrived; only the start of one not yet whole is kept.
        if upgraded, received.readableBytes == 0 {
            takeFrames(from: &bytes)
            if bytes.readableBytes > 0 { received.writeBuffer(&bytes) }
            return
        }
        received.writeBuffer(&bytes)
        if !upgraded {
            guard let reply = handshake() else { return }
            upgraded = true
            var buffer = context.channel.allocator.buffer(string: reply)
            Array(#"{"t":"c","d":{"t":"h","d":{"ts":0,"v":"5","h":"floor","s":"floor"}}}"#.utf8).withUnsafeBytes { Self.frame($0, into: &buffer) }
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        }
        takeFrames(from: &received)
        if received.readableBytes == 0 { received.clear() }
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        if let out {
            self.out = nil
            context.writeAndFlush(wrapOutboundOut(out), promise: nil)
        }
    }

    /// The 101 answer once the whole request is in (RFC 6455 §4.2.2). By hand rather than with
    /// SwiftNIO's HTTP upgrade, whose WebSocket frame decoder and encoder would stay in the
    /// pipeline: after the handshake this handler is the whole pipeline, as the floor must be.
    private func handshake() -> String? {
        let view = received.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
        received.moveReaderIndex(to: end.upperBound)
        let key =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }.map { $0.dropFirst(18).trimmingPrefix(" ") } ?? ""
        let accept = Data(Insecure.SHA1.hash(data: Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
        return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
    }

    /// Takes every whole frame at the start of `buffer`.
    private func takeFrames(from buffer: inout ByteBuffer) {
        while let length = nextFrame(in: buffer) { buffer.moveReaderIndex(forwardBy: length) }
    }

    /// Takes the whole masked client frame at the start of `buffer`, its payload unmasked into
    /// scratch room (as `kindling serve` reads them); its length, or nil until one is whole.
    private func nextFrame(in buffer: ByteBuffer) -> Int? {
        guard let second = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt8.self) else { return nil }
        var length = Int(second & 0x7f)
        var header = 2
        if length == 126 {
            guard let long = buffer.getInteger(at: buffer.readerIndex + 2, as: UInt16.self) else { return nil }
            length = Int(long)
            header = 4
        } else if length == 127 {
            guard let long = buffer.getInteger(at: buffer.readerIndex + 2, as: UInt64.self), long < 1 << 24 else { return nil }
            length = Int(long)
            header = 10
        }
        guard buffer.readableBytes >= header + 4 + length else { return nil }
        buffer.withUnsafeReadableBytes { bytes in
            let mask = bytes.loadUnaligned(fromByteOffset: header, as: UInt32.self)
            let masked = UnsafeRawBufferPointer(rebasing: bytes[(header + 4)..<(header + 4 + length)])
            withUnsafeTemporaryAllocation(byteCount: max(length, 1), alignment: 8) { scratch in
                for index in 0..<length { scratch[index] = masked[index] ^ UInt8(truncatingIfNeeded: mask >> (UInt32(index & 3) * 8)) }
                take(UnsafeRawBufferPointer(rebasing: scratch[0..<length]))
            }
        }
        return header + 4 + length
    }

    /// Answers one request and, for a put, queues its payload to every listener.
    private func take(_ payload: UnsafeRawBufferPointer) {
        // At most 19 digits (an Int's), so the answer stays a frame with a one-byte length.
        let digits =
            Self.end(of: Self.number, in: payload).map { payload[$0...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.prefix(19) }
            ?? []
        if out == nil { out = ByteBuffer() }
        // In place: the buffer is not copied.
        out?.writeInteger(UInt8(0x81))
        out?.writeInteger(UInt8(Self.answerHead.count + digits.count + Self.answerTail.count))
        out?.writeBytes(Self.answerHead)
        out?.writeBytes(digits)
        out?.writeBytes(Self.answerTail)
        guard let action = Self.end(of: Self.action, in: payload), action < payload.count else { return }
        if payload[action] == UInt8(ascii: "q") {
            hub.listeners.append(self)
        } else if payload[action] == UInt8(ascii: "p"), let body = Self.end(of: Self.body, in: payload), body + 2 <= payload.count {
            // The put's body as a data event: the SDKs' envelope ends with the body and then
            // closes `d` and the message. One frame for every listener, as Kindling's fan-out
            // shares one.
            var event = Self.eventHead
            event += payload[body..<(payload.count - 2)]
            event += Self.eventTail
            var frame = ByteBuffer()
            event.withUnsafeBytes { Self.frame($0, into: &frame) }
            for listener in hub.listeners where listener !== self { listener.deliver(frame) }
        }
    }

    /// Queues `frame` to be written at the end of the loop turn; the first one waiting is kept as
    /// it is (its storage shared with every other listener's).
    private func deliver(_ frame: ByteBuffer) {
        guard out == nil else {
            out?.writeImmutableBuffer(frame)
            return
        }
        out = frame
        hub.dirty.append(self)
        guard !hub.flushQueued, let loop = context?.eventLoop else { return }
        hub.flushQueued = true
        loop.execute { [hub] in
            hub.flushQueued = false
            let dirty = hub.dirty
            hub.dirty = []
            for handler in dirty { handler.flush() }
        }
    }

    private func flush() {
        guard let context, let out else { return }
        self.out = nil
        context.writeAndFlush(wrapOutboundOut(out), promise: nil)
    }

    /// Appends an unmasked final text frame holding `payload`.
    private static func frame(_ payload: UnsafeRawBufferPointer, into buffer: inout ByteBuffer) {
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
