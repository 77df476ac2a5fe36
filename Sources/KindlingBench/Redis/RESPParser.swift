import NIOCore

/// Reads RESP2 values from the bytes received so far. A value cut off by the end of the buffer
/// leaves the buffer untouched, to be tried again when more bytes arrive.
public enum RESPParser {
    /// The next whole value in `buffer`, consuming it, or nil when it is not all there yet.
    public static func next(_ buffer: inout ByteBuffer) throws(BenchError) -> RESPValue? {
        var copy = buffer
        guard let value = try parse(&copy) else { return nil }
        buffer = copy
        return value
    }

    private static func parse(_ buffer: inout ByteBuffer) throws(BenchError) -> RESPValue? {
        guard let kind = buffer.readInteger(as: UInt8.self), let line = readLine(&buffer) else { return nil }
        switch kind {
        case UInt8(ascii: "+"):
            return .simple(line)
        case UInt8(ascii: "-"):
            return .error(line)
        case UInt8(ascii: ":"):
            guard let value = Int(line) else { throw BenchError.unexpectedReply("RESP integer \(line)") }
            return .integer(value)
        case UInt8(ascii: "$"):
            guard let length = Int(line) else { throw BenchError.unexpectedReply("RESP bulk length \(line)") }
            if length < 0 { return .bulk(nil) }
            guard buffer.readableBytes >= length + 2, let bytes = buffer.readSlice(length: length) else { return nil }
            buffer.moveReaderIndex(forwardBy: 2)
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            guard let count = Int(line) else { throw BenchError.unexpectedReply("RESP array length \(line)") }
            if count < 0 { return .array(nil) }
            var elements: [RESPValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count {
                guard let element = try parse(&buffer) else { return nil }
                elements.append(element)
            }
            return .array(elements)
        default:
            throw BenchError.unexpectedReply("RESP type byte \(kind)")
        }
    }

    /// The text up to the next CRLF, consuming both.
    private static func readLine(_ buffer: inout ByteBuffer) -> String? {
        let found = buffer.withUnsafeReadableBytes { bytes -> Int? in
            var index = 0
            while index + 1 < bytes.count {
                if bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") { return index }
                index += 1
            }
            return nil
        }
        guard let length = found, let line = buffer.readString(length: length) else { return nil }
        buffer.moveReaderIndex(forwardBy: 2)
        return line
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
