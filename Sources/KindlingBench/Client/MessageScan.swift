import KindlingProtocol
import NIOCore

/// Byte-level looks into server messages, so the hot paths (acks and pushes) need no JSON parse.
/// The bytes it looks for are the protocol's (`WireLiterals`).
///
/// Kindling writes a response as `{"t":"d","d":{"r":N,"b":{"s":STATUS,…}}}` and a push as
/// `{"t":"d","d":{"a":"d","b":{"p":PATH,"d":DATA}}}`. Anything shaped otherwise is reported as
/// `nil`, and the caller falls back to a full parse.
public enum MessageScan {
    private static let responsePrefix = WireLiterals.numberedDataPrefix
    private static let statusKey = WireLiterals.responseStatusKey
    private static let pushPrefix = WireLiterals.pushPrefix
    private static let pathKey = WireLiterals.pushPathKey
    private static let dataKey = WireLiterals.pushDataKey
    private static let controlPing = WireLiterals.pingPrefix

    /// A response's request number and whether its status is `ok`.
    public static func response(_ message: ByteBuffer) -> (number: Int, ok: Bool)? {
        message.withUnsafeReadableBytes { bytes in
            guard bytes.starts(with: responsePrefix) else { return nil }
            var index = responsePrefix.count
            guard let number = decimal(bytes, at: &index) else { return nil }
            guard bytes[index...].starts(with: statusKey) else { return nil }
            index += statusKey.count
            let ok =
                index + 2 < bytes.count && bytes[index] == UInt8(ascii: "o") && bytes[index + 1] == UInt8(ascii: "k")
                && bytes[index + 2] == UInt8(ascii: "\"")
            return (number, ok)
        }
    }

    /// A push's action (`d` or `m`), path (as sent, without a leading slash) and the byte range
    /// of its data.
    public static func push(_ message: ByteBuffer) -> (merge: Bool, path: String, data: Range<Int>)? {
        message.withUnsafeReadableBytes { bytes in
            guard bytes.starts(with: pushPrefix), bytes.count > pushPrefix.count + 2 else { return nil }
            let merge = bytes[pushPrefix.count] == UInt8(ascii: "m")
            guard let pathStart = find(pathKey, in: bytes, from: pushPrefix.count) else { return nil }
            let from = pathStart + pathKey.count
            guard let pathEnd = find(dataKey, in: bytes, from: from) else { return nil }
            let path = String(decoding: bytes[from..<pathEnd], as: UTF8.self)
            let dataStart = pathEnd + dataKey.count
            // The push ends with `}}}`, or `,"t":TAG}}}` for a tagged query; this harness sends none.
            guard bytes.count >= dataStart + 3 else { return nil }
            return (merge, path, dataStart..<(bytes.count - 3))
        }
    }

    /// The integer after the first `"key":` in `message`, or nil.
    public static func integer(after key: [UInt8], in message: ByteBuffer) -> Int? {
        message.withUnsafeReadableBytes { bytes in
            guard var index = find(key, in: bytes, from: 0) else { return nil }
            index += key.count
            return decimal(bytes, at: &index)
        }
    }

    /// True when `needle` occurs in `message`.
    public static func contains(_ needle: [UInt8], in message: ByteBuffer) -> Bool {
        message.withUnsafeReadableBytes { find(needle, in: $0, from: 0) != nil }
    }

    /// The integer in `range` of `message` (a push's data that is a bare number).
    public static func integer(in message: ByteBuffer, range: Range<Int>) -> Int? {
        message.withUnsafeReadableBytes { bytes in
            var index = range.lowerBound
            guard let value = decimal(bytes, at: &index), index == range.upperBound else { return nil }
            return value
        }
    }

    /// The count when a frame is a frame-count header (1 to 6 digits only).
    static func frameCount(_ frame: ByteBuffer) -> Int? {
        guard frame.readableBytes >= 1, frame.readableBytes <= 6 else { return nil }
        return frame.withUnsafeReadableBytes { bytes in
            var index = 0
            guard let value = decimal(bytes, at: &index), index == bytes.count else { return nil }
            return value
        }
    }

    static func isControlPing(_ message: ByteBuffer) -> Bool {
        message.withUnsafeReadableBytes { $0.starts(with: controlPing) }
    }

    /// Reads an optionally negative decimal integer at `index`, moving past it; nil when there
    /// are no digits or the number does not fit an `Int` (a server's bytes are not trusted).
    static func decimal(_ bytes: UnsafeRawBufferPointer, at index: inout Int) -> Int? {
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        // Built downwards, so Int.min, whose magnitude no Int holds, fits too.
        var value = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (tens, over) = value.multipliedReportingOverflow(by: 10)
            let (next, under) = tens.subtractingReportingOverflow(Int(bytes[index] - UInt8(ascii: "0")))
            guard !over, !under else { return nil }
            value = next
            index += 1
        }
        guard index > start else { return nil }
        if negative { return value }
        let (positive, over) = (0).subtractingReportingOverflow(value)
        return over ? nil : positive
    }

    /// The index of the first occurrence of `needle` at or after `from`.
    static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        var index = from
        let last = bytes.count - needle.count
        while index <= last {
            if bytes[index] == first {
                var matched = 1
                while matched < needle.count, bytes[index + matched] == needle[matched] { matched += 1 }
                if matched == needle.count { return index }
            }
            index += 1
        }
        return nil
    }
}
