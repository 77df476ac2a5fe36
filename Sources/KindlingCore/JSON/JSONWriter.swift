/// Writes compact JSON the way JavaScript's `JSON.stringify` does, into a byte buffer.
///
/// Numbers use JavaScript's shortest round-trip form (`1e+21`, `0.1`, `5`), except that negative
/// zero stays `-0` so that a value read back hashes the same. Non-ASCII text is written as raw
/// UTF-8; only `"`, `\` and control characters are escaped.
public struct JSONWriter {
    /// The bytes written so far (since the last spill, for a counting writer).
    public var bytes: [UInt8] = []
    /// For a counting writer: how many bytes may gather before they are counted and dropped.
    private let spillAbove: Int?
    /// Bytes counted and dropped so far.
    private var spilled = 0

    public init() {
        spillAbove = nil
    }

    /// A writer that only measures: bytes are counted and dropped whenever more than
    /// `spillAbove` gather (at a child's end), so measuring a large tree takes no more memory
    /// than that plus its largest leaf.
    public init(countingOnly spillAbove: Int) {
        self.spillAbove = spillAbove
    }

    /// Every byte written, the spilled ones included.
    public var count: Int { spilled + bytes.count }

    /// For a counting writer: counts and drops the bytes gathered when there are more than its
    /// limit. Called between children, where nothing written is still to be patched.
    public mutating func spillIfFull() {
        guard let spillAbove, bytes.count > spillAbove else { return }
        spilled += bytes.count
        bytes.removeAll(keepingCapacity: true)
    }

    /// Writes a whole value.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: writeNull()
        case .bool(let flag): write(flag)
        case .number(let number): write(number)
        case .string(let text): write(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (offset, member) in members.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                write(member.key)
                bytes.append(UInt8(ascii: ":"))
                write(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    public mutating func writeNull() { bytes.append(contentsOf: "null".utf8) }

    public mutating func write(_ flag: Bool) { bytes.append(contentsOf: (flag ? "true" : "false").utf8) }

    public mutating func write(_ number: Double) { JSNumberFormat.append(number, to: &bytes) }

    /// Writes a JSON string literal.
    public mutating func write(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        appendEscaped(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes `path` as the JSON string of `Path.relativeString` (keys joined by "/"), straight
    /// from its keys: every log record and event has one, and building the string first cost more
    /// than writing it.
    public mutating func write(relativePath path: Path) {
        bytes.append(UInt8(ascii: "\""))
        for (index, key) in path.keys.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "/")) }
            if !key.appendShortPlain(to: &bytes) { appendEscaped(key.string) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends the bytes of `text` escaped for a JSON string literal.
    private mutating func appendEscaped(_ text: String) {
        // Read through the string's own bytes (a keyed path's keys and most values are
        // native): iterating `utf8` element by element is several times slower.
        var text = text
        text.withUTF8 { utf8 in
            // Runs without anything to escape (most strings are one) are copied whole.
            var index = 0
            while true {
                let stop = JSONStringScan.plainRun(utf8, from: index).end
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[index..<stop]))
                guard stop < utf8.count else { return }
                appendEscape(of: utf8[stop])
                index = stop + 1
            }
        }
    }

    /// Appends the escape of one byte that a JSON string cannot hold as it is.
    private mutating func appendEscape(of byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
        }
    }

    /// Writes raw, already-encoded JSON (an object key separator, a cached payload).
    public mutating func writeRaw(_ raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }

    /// The text written so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// One value as JSON text.
    public static func string(_ value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.write(value)
        return writer.text
    }
}
