import KindlingCore

/// The envelope nearly every data message has, exactly as the SDKs write it:
/// `{"t":"d","d":{"r":N,"a":"ACTION","b":BODY}}`, no spaces, members in that order.
///
/// It is matched byte for byte and only the body is parsed as JSON, so the two envelope objects
/// are never built nor searched. Anything else (other spacing or order, a repeated member, a
/// number that is not plain digits, an escape in the action, a body the action refuses) is
/// left to the general decoder, which gives the same result or the same error: this reader only
/// answers when it is sure to agree.
enum CompactRequestEnvelope {
    /// The request, or nil when the message is not in the compact shape (or is invalid).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> Request? {
        var index = 0
        guard match(#"{"t":"d","d":{"r":"#, in: bytes, at: &index), let number = number(in: bytes, at: &index),
            match(#","a":""#, in: bytes, at: &index), let name = action(in: bytes, at: &index),
            match(#","b":"#, in: bytes, at: &index)
        else { return nil }
        if name == "p", let put = put(in: bytes, at: index) { return Request(number: number, action: put) }
        // The body sits two objects deep, as in a whole parse.
        guard let (body, end) = try? JSONParser.parseValue(bytes, at: index, depth: 2) else { return nil }
        index = end
        guard match("}}", in: bytes, at: &index), index == bytes.count else { return nil }
        guard let action = try? Action.decode(name, body) else { return nil }
        return Request(number: number, action: action)
    }

    /// A put's body as the SDKs write it, `{"p":"PATH","d":VALUE}` and the envelope's end, read
    /// without building the body's object: the path in plain ASCII (no escapes), the value parsed
    /// where it lies. Anything else (a hash, other members or order, a path the general decoder
    /// would refuse) is left to that decoder.
    private static func put(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Action? {
        var index = start
        guard match(#"{"p":""#, in: bytes, at: &index) else { return nil }
        let pathStart = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            let byte = bytes[index]
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        let pathEnd = index
        guard match(#"","d":"#, in: bytes, at: &index) else { return nil }
        // The value sits three objects deep: the envelope, its data and the body.
        guard let (value, end) = try? JSONParser.parseValue(bytes, at: index, depth: 3) else { return nil }
        index = end
        guard match("}}}", in: bytes, at: &index), index == bytes.count else { return nil }
        // Printable ASCII, checked above, so valid UTF-8.
        guard let path = try? Path(utf8: UnsafeBufferPointer(rebasing: bytes[pathStart..<pathEnd])) else { return nil }
        return .put(path: path, data: value, hash: nil)
    }

    /// Moves past `literal` when the bytes at `index` are exactly it (compared eight bytes at a
    /// time: the envelope's literals are most of the bytes this reader looks at).
    private static func match(_ literal: StaticString, in bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count, let base = bytes.baseAddress else { return false }
        let here = UnsafeRawPointer(base + index), expected = UnsafeRawPointer(literal.utf8Start)
        var offset = 0
        while offset + 8 <= count {
            guard here.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            else { return false }
            offset += 8
        }
        while offset < count {
            guard here.load(fromByteOffset: offset, as: UInt8.self) == expected.load(fromByteOffset: offset, as: UInt8.self) else { return false }
            offset += 1
        }
        index += count
        return true
    }

    /// A request number as plain JSON digits: no sign, fraction or exponent, no leading zero,
    /// at most 15 digits (`Double.maxWireCounter`, the general decoder's limit).
    private static func number(in bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) -> Int? {
        let start = index
        var value = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
            guard index - start <= 15 else { return nil }
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        return value
    }

    /// An action name of printable ASCII without escapes, up to its closing quote.
    private static func action(in bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) -> String? {
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            let byte = bytes[index]
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\"), index - start < 32 else { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        index += 1
        return name
    }
}
