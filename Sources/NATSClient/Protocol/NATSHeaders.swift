import NIOCore

/// NATS/1.0 message headers. JetStream speaks through them (expected sequences, message ids,
/// rollups) and the server answers with a status line (503 no responders, 100 heartbeats, 404/408).
public struct NATSHeaders: Sendable, Hashable {
    /// The status code on the NATS/1.0 line of a server-made message, nil for ordinary headers.
    public var status: Int?
    /// The text after the status code ("Idle Heartbeat", "FlowControl Request", "No Messages").
    public var statusDescription: String
    /// All fields in order.
    public private(set) var fields: [NATSHeaderField]

    /// Empty headers with no status.
    public init() {
        status = nil
        statusDescription = ""
        fields = []
    }

    /// Headers from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        self.init()
        for (name, value) in pairs { fields.append(NATSHeaderField(name: name, value: value)) }
    }

    /// The first value for `name` (names compare exactly, as the server and JetStream do).
    public subscript(name: String) -> String? {
        fields.first { $0.name == name }?.value
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// Adds a field after the existing ones (repeated names are allowed).
    public mutating func append(_ name: String, _ value: String) {
        fields.append(NATSHeaderField(name: name, value: value))
    }

    /// Replaces every field named `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { $0.name == name }
        fields.append(NATSHeaderField(name: name, value: value))
    }

    /// Whether there is nothing to send.
    public var isEmpty: Bool { fields.isEmpty && status == nil }

    /// The wire form: `NATS/1.0\r\n` then `Name: Value\r\n` lines and a blank line.
    func encoded() throws(NATSError) -> [UInt8] {
        var out = Array("NATS/1.0\r\n".utf8)
        for field in fields {
            let name = Array(field.name.utf8)
            let value = Array(field.value.utf8)
            guard !name.isEmpty, name.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) else {
                throw .invalidHeader("bad header name \(field.name.debugDescription)")
            }
            guard !value.contains(where: { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) else {
                throw .invalidHeader("header value with CR or LF for \(field.name)")
            }
            out += name
            out += [UInt8(ascii: ":"), UInt8(ascii: " ")]
            out += value
            out += [13, 10]
        }
        out += [13, 10]
        return out
    }

    /// Parses a header block as the server sends it.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(NATSProtocolError) -> NATSHeaders {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 10 {
                var end = index
                if end > start, bytes[end - 1] == 13 { end -= 1 }
                lines.append(bytes[start..<end])
                start = index + 1
            }
            index += 1
        }
        if start < bytes.endIndex { lines.append(bytes[start..<bytes.endIndex]) }
        guard let first = lines.first else { throw .malformedHeaders("empty") }
        let version = Array("NATS/1.0".utf8)
        guard first.count >= version.count, Array(first.prefix(version.count)) == version else {
            throw .malformedHeaders("no NATS/1.0 line")
        }
        var headers = NATSHeaders()
        let rest = String(decoding: first.dropFirst(version.count), as: UTF8.self).trimmingSpaces()
        if !rest.isEmpty {
            let code = rest.prefix { $0.isASCII && $0.isNumber }
            guard code.count == 3, let status = Int(code) else { throw .malformedHeaders("bad status \(rest)") }
            headers.status = status
            headers.statusDescription = String(rest.dropFirst(3)).trimmingSpaces()
        }
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                throw .malformedHeaders("line without a name")
            }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            var valueStart = colon + 1
            while valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") || line[valueStart] == 9 { valueStart += 1 }
            headers.append(name, String(decoding: line[valueStart..<line.endIndex], as: UTF8.self))
        }
        return headers
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
