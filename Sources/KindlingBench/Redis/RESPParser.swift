import NIOCore

/// Reads RESP2 values from the bytes received so far. A value cut off by the end of the buffer
/// leaves the buffer untouched, to be tried again when more bytes arrive.
public enum RESPParser {
    /// The next whole value in `buffer`, consuming it, or nil when it is not all there yet.
    ///
    /// Read from the bytes in place: lengths and integers are parsed from their digits and bulk
    /// strings are slices of `buffer` (only simple strings and errors become strings), so a
    /// pub/sub message costs one array. The realtime client beside it finds its frames the same
    /// way: the harness's own cost is taken from the server it measures.
    public static func next(_ buffer: inout ByteBuffer) throws(BenchError) -> RESPValue? {
        let source = buffer
        let parsed = source.withUnsafeReadableBytes { bytes in
            Result { () throws(BenchError) -> (RESPValue, Int)? in
                var index = 0
                guard let value = try value(in: bytes, at: &index, of: source) else { return nil }
                return (value, index)
            }
        }
        guard let (value, consumed) = try parsed.get() else { return nil }
        buffer.moveReaderIndex(forwardBy: consumed)
        return value
    }

    /// The value starting at `index` of `bytes` (the readable bytes of `source`), moving `index`
    /// past it; nil when it is cut off.
    private static func value(in bytes: UnsafeRawBufferPointer, at index: inout Int, of source: ByteBuffer) throws(BenchError) -> RESPValue? {
        guard index < bytes.count, let end = lineEnd(in: bytes, from: index + 1) else { return nil }
        let kind = bytes[index]
        let line = UnsafeRawBufferPointer(rebasing: bytes[(index + 1)..<end])
        index = end + 2
        switch kind {
        case UInt8(ascii: "+"):
            return .simple(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: "-"):
            return .error(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: ":"):
            return .integer(try integer(line, "RESP integer"))
        case UInt8(ascii: "$"):
            let length = try integer(line, "RESP bulk length")
            if length < 0 { return .bulk(nil) }
            // Compared with what is there before anything is added to it.
            guard bytes.count - index >= 2, length <= bytes.count - index - 2 else { return nil }
            let slice = source.getSlice(at: source.readerIndex + index, length: length)
            index += length + 2
            return .bulk(slice)
        case UInt8(ascii: "*"):
            let count = try integer(line, "RESP array length")
            if count < 0 { return .array(nil) }
            var elements: [RESPValue] = []
            // Each element takes at least three bytes: no more room than the bytes can fill.
            elements.reserveCapacity(min(count, (bytes.count - index) / 3 + 1))
            for _ in 0..<count {
                guard let element = try value(in: bytes, at: &index, of: source) else { return nil }
                elements.append(element)
            }
            return .array(elements)
        default:
            throw .unexpectedReply("RESP type byte \(kind)")
        }
    }

    /// Where the CR of the next CRLF at or after `start` is.
    private static func lineEnd(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") { return index }
            index += 1
        }
        return nil
    }

    /// A decimal integer with an optional sign, the whole line, refused when it does not fit an
    /// `Int` (read as the realtime client reads numbers, `MessageScan.decimal`).
    private static func integer(_ line: UnsafeRawBufferPointer, _ what: String) throws(BenchError) -> Int {
        // A plus is skipped only before a digit ("+-1" is no number).
        var index = line.count > 1 && line[0] == UInt8(ascii: "+") && line[1] != UInt8(ascii: "-") ? 1 : 0
        guard let value = MessageScan.decimal(line, at: &index), index == line.count else {
            throw .unexpectedReply("\(what) \(String(decoding: line, as: UTF8.self))")
        }
        return value
    }

    /// A command as a RESP array of bulk strings.
    public static func command(_ parts: [[UInt8]], into buffer: inout ByteBuffer) {
        buffer.writeString("*\(parts.count)\r\n")
        for part in parts {
            buffer.writeString("$\(part.count)\r\n")
            buffer.writeBytes(part)
            buffer.writeString("\r\n")
        }
    }
}
