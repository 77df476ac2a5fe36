import KindlingCore
import KindlingProtocol

/// One committed write in the log: its sequence number, when it was committed, and the write as
/// resolved (server values and push ids already fixed, so replaying it gives the same tree).
///
/// On disk: `[length: UInt32 LE][crc32: UInt32 LE][sequence: UInt64 LE][payload]`, where length
/// and the CRC-32 cover the sequence and the payload, and the payload is JSON:
/// `{"s":PATH,"d":DATA,"t":MS}` for a set, `{"m":PATH,"d":{REL:DATA,…},"t":MS}` for a merge, data
/// in export form, with `"i":ID` (a cluster follower's forwarded write's id, `writeID`) and
/// `"w":WRITER` before `t` when they are there. `t` (the commit time, which history and
/// point-in-time restore read) is last, so `time(ofBody:)` finds it without parsing the data;
/// records written before it existed have none (time 0), and records written before ids
/// existed have no `i`.
struct LogRecord: Sendable, Equatable {
    var sequence: UInt64
    var write: Write
    /// Milliseconds since 1970 when the write was committed; 0 when not known (an older record).
    var time: Int64 = 0
    /// Who wrote it, when the server records writers (`HistoryPolicy.recordsWriters`), as
    /// JSON text: `{"uid":…}`, `{"admin":true}`, or `null` for an unauthenticated client. Bytes,
    /// not a `JSONValue`, so a record copies as cheaply on the hot path as it did without one.
    var writer: [UInt8]? = nil
    /// The id a cluster follower gave the write it forwarded (`ForwardedWrite.id`), so a node
    /// that leads later knows the write is in the log when the follower sends it again
    /// (`RecentWriteIDs`); nil for any other write, and in records of nodes without ids.
    var writeID: String? = nil

    static let headerSize = 8

    /// The framed bytes of this record alone.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }

    /// Appends the framed record to `bytes`: header, sequence and payload written in place (the
    /// header patched in last), so a batch of records is one buffer and no record is copied.
    func encode(into bytes: inout [UInt8]) {
        let start = bytes.count
        var writer = JSONWriter()
        swap(&writer.bytes, &bytes)
        // The header's eight bytes (patched below) and the sequence, in one append.
        withUnsafeBytes(of: (UInt64(0), sequence.littleEndian)) { writer.bytes.append(contentsOf: $0) }
        switch write {
        case .set(let path, let node):
            LogRecord.append(#"{"s":"#, to: &writer.bytes)
            writer.write(relativePath: path)
            LogRecord.append(#","d":"#, to: &writer.bytes)
            node.write(to: &writer, format: .export)
        case .merge(let path, let entries):
            LogRecord.append(#"{"m":"#, to: &writer.bytes)
            writer.write(relativePath: path)
            LogRecord.append(#","d":"#, to: &writer.bytes)
            writer.write(entries, format: .export)
        }
        if let writeID {
            LogRecord.append(#","i":"#, to: &writer.bytes)
            writer.write(writeID)
        }
        if let who = self.writer {
            LogRecord.append(#","w":"#, to: &writer.bytes)
            writer.bytes.append(contentsOf: who)
        }
        if time > 0 {
            LogRecord.append(#","t":"#, to: &writer.bytes)
            WireLiterals.appendDecimal(Int(time), to: &writer.bytes)
        }
        writer.bytes.append(UInt8(ascii: "}"))
        swap(&writer.bytes, &bytes)
        let bodyStart = start + LogRecord.headerSize
        let crc = bytes.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[bodyStart...])) }
        LogRecord.store(UInt32(bytes.count - bodyStart), in: &bytes, at: start)
        LogRecord.store(crc, in: &bytes, at: start + 4)
    }

    /// After the first record of a batch of `count` is in `bytes`: its size tells what the batch
    /// needs (with a quarter to spare), so the buffer grows once instead of doubling its way up.
    static func reserve(_ bytes: inout [UInt8], forBatchOf count: Int) {
        guard count > 1 else { return }
        bytes.reserveCapacity(bytes.count * (count + count / 4))
    }

    /// Writes `value` little-endian over the four bytes at `index`.
    private static func store(_ value: UInt32, in bytes: inout [UInt8], at index: Int) {
        for offset in 0..<4 { bytes[index + offset] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(offset))) }
    }

    /// Reads the body (sequence and payload) of a record whose frame and checksum were checked.
    static func decode(body: ArraySlice<UInt8>) throws -> LogRecord {
        guard body.count >= 8 else { throw StorageError.corrupt("record shorter than its sequence number") }
        let sequence = readUInt64(body, at: body.startIndex)
        let json = try JSONParser.parse(Array(body.dropFirst(8)))
        let time = json["t"]?.numberValue.flatMap { Int64(exactly: $0) } ?? 0
        let writer = json["w"].map { Array(JSONWriter.string($0).utf8) }
        let writeID = json["i"]?.stringValue
        if let pathText = json["s"]?.stringValue, let data = json["d"] {
            let path = try Path(pathText)
            return LogRecord(
                sequence: sequence, write: .set(path, try decodeNode(data, at: path)), time: time, writer: writer, writeID: writeID)
        }
        if let pathText = json["m"]?.stringValue, case .object(let members)? = json["d"] {
            let path = try Path(pathText)
            var entries: [MergeEntry] = []
            for member in members {
                let relative = try Path(member.key)
                entries.append(MergeEntry(path: relative, node: try decodeNode(member.value, at: path.appending(relative))))
            }
            return LogRecord(sequence: sequence, write: .merge(path, entries), time: time, writer: writer, writeID: writeID)
        }
        throw StorageError.corrupt("record payload is neither a set nor a merge")
    }

    /// Appends the bytes of a literal, without going through a `String`.
    private static func append(_ literal: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// The commit time of a record from its body alone (the digits of a trailing `,"t":MS}`),
    /// without parsing its data; 0 for a record that has none.
    static func time(ofBody body: ArraySlice<UInt8>) -> Int64 {
        guard body.count > 8, body.last == UInt8(ascii: "}") else { return 0 }
        var index = body.endIndex - 1
        var time: Int64 = 0
        var scale: Int64 = 1
        while index > body.startIndex + 8, let digit = body[index - 1].asciiDigit, scale <= 100_000_000_000_000_000 {
            time += Int64(digit) * scale
            scale *= 10
            index -= 1
        }
        let marker = Array(#","t":"#.utf8)
        guard scale > 1, index - marker.count >= body.startIndex + 8, Array(body[(index - marker.count)..<index]) == marker else { return 0 }
        return time
    }

    private static func decodeNode(_ json: JSONValue, at path: Path) throws -> Node {
        if path.last?.isPriority == true {
            switch json {
            case .null: return .empty
            case .number(let number): return Node(.number(number))
            case .string(let text): return Node(.string(text))
            default: throw StorageError.corrupt("priority record holds \(JSONWriter.string(json))")
            }
        }
        return try Node(json: json, at: path)
    }

    static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func readUInt32(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[index + $1]) << (8 * UInt32($1)) }
    }

    static func readUInt64(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[index + $1]) << (8 * UInt64($1)) }
    }
}

extension UInt8 {
    /// The value of an ASCII digit, or nil.
    fileprivate var asciiDigit: Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) ? Int(self - UInt8(ascii: "0")) : nil
    }
}

/// Why storage could not do what it was asked.
public enum StorageError: Error, CustomStringConvertible, Sendable {
    /// Bytes that are not what Kindling wrote.
    case corrupt(String)
    /// A checksum mismatch in the middle of a log: the start stops unless repair was asked for.
    case corruptLog(file: String, offset: Int, reason: String)
    /// A snapshot file that cannot be read back: damaged, truncated, or not a snapshot. Recovery
    /// skips it for an older one.
    case corruptSnapshot(file: String, reason: String)
    /// The operating system refused a file operation.
    case io(String)

    public var description: String {
        switch self {
        case .corrupt(let reason): return "corrupt data: \(reason)"
        case .corruptLog(let file, let offset, let reason):
            return
                "corrupt log \(file) at byte \(offset): \(reason). Start with --repair to cut the log there (the writes from that point on are lost)."
        case .corruptSnapshot(let file, let reason): return "unreadable snapshot \(file): \(reason)"
        case .io(let reason): return reason
        }
    }
}
