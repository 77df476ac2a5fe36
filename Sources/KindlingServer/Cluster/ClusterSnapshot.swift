import KindlingCore

/// A namespace's snapshot in cluster mode, stored in the `kindling_snapshots` object store under
/// the namespace's name: the tree as of record `recordSequence`, the namespace's own rules then,
/// and `streamSequence`, the log's stream sequence up to which every batch holds only records the
/// tree has. A node that starts loads it and reads the log from `streamSequence + 1`, skipping
/// records it already has (their sequence is at most `recordSequence`).
///
/// Bytes: `[header length: UInt32 LE][header JSON][tree in the snapshot format]`, the header
/// `{"v":1,"s":"<record sequence>","q":"<stream sequence>","r":<rules source or null>,
/// "i":[[id,"<record sequence>",time,key or null],…]}`; `i` is absent in snapshots of nodes
/// that did not keep write ids (read as none).
struct ClusterSnapshot {
    var recordSequence: UInt64
    var streamSequence: UInt64
    var rulesSource: String?
    var root: Node
    /// The forwarded writes of the last minute of records up to `recordSequence`
    /// (`RecentWriteIDs.newest(within:)`), for a node that starts from the snapshot.
    var writeIDs: [RecentWriteIDs.Remembered] = []

    /// The header's format version; a node refuses a snapshot of another version.
    static let version = 1

    func encoded() throws(StorageError) -> [UInt8] {
        let header = JSONValue.object([
            JSONMember("v", .number(Double(Self.version))),
            JSONMember("s", .string(String(recordSequence))),
            JSONMember("q", .string(String(streamSequence))),
            JSONMember("r", rulesSource.map { .string($0) } ?? .null),
            JSONMember(
                "i",
                .array(
                    writeIDs.map { write in
                        .array([
                            .string(write.id), .string(String(write.entry.sequence)), .number(Double(write.time)),
                            write.entry.key.map { .string($0.string) } ?? .null,
                        ])
                    })),
        ])
        let headerBytes = Array(JSONWriter.string(header).utf8)
        var bytes: [UInt8] = []
        LogRecord.append(UInt32(headerBytes.count), to: &bytes)
        bytes += headerBytes
        do {
            _ = try SnapshotEncoder.encode(root) { bytes.append(contentsOf: $0) }
        } catch {
            throw .io("encoding the snapshot: \(error)")
        }
        return bytes
    }

    /// Reads a snapshot; anything else (damaged, truncated, another version) is a
    /// `StorageError.corruptSnapshot` naming `name`.
    static func decode(_ bytes: [UInt8], name: String) throws(StorageError) -> ClusterSnapshot {
        func corrupt(_ reason: String) -> StorageError { .corruptSnapshot(file: "kindling_snapshots/\(name)", reason: reason) }
        guard bytes.count >= 4 else { throw corrupt("shorter than its header length") }
        let headerLength = Int(LogRecord.readUInt32(bytes[...], at: 0))
        guard headerLength <= bytes.count - 4 else { throw corrupt("a header longer than the snapshot") }
        let header: JSONValue
        do {
            header = try JSONParser.parse(Array(bytes[4..<(4 + headerLength)]))
        } catch {
            throw corrupt("the header is not JSON: \(error)")
        }
        guard header["v"]?.numberValue == Double(version) else { throw corrupt("not a version \(version) snapshot") }
        guard let record = header["s"]?.stringValue.flatMap({ UInt64($0) }), let stream = header["q"]?.stringValue.flatMap({ UInt64($0) }) else {
            throw corrupt("the header lacks its sequences")
        }
        let rules: String?
        switch header["r"] {
        case .string(let source)?: rules = source
        case .null?: rules = nil
        default: throw corrupt("the header's rules are neither text nor null")
        }
        var writeIDs: [RecentWriteIDs.Remembered] = []
        if let listed = header["i"] {
            guard case .array(let items) = listed else { throw corrupt("the header's write ids are not a list") }
            for item in items {
                guard case .array(let fields) = item, fields.count == 4, let id = fields[0].stringValue,
                    let sequence = fields[1].stringValue.flatMap({ UInt64($0) }), let time = fields[2].numberValue.flatMap({ Int64(exactly: $0) })
                else { throw corrupt("a write id in the header is not [id, sequence, time, key]") }
                var key: Key?
                if case .string(let text) = fields[3] {
                    do throws(ValidationError) {
                        key = try Key(text)
                    } catch {
                        throw corrupt("a write id's key: \(error)")
                    }
                }
                writeIDs.append(RecentWriteIDs.Remembered(id: id, entry: RecentWriteIDs.Entry(sequence: sequence, key: key), time: time))
            }
        }
        var position = 4 + headerLength
        let root: Node
        do {
            root = try SnapshotDecoder.decode(scheduler: ParallelSnapshotBlocks()) { buffer in
                let count = min(buffer.count, bytes.count - position)
                bytes.withUnsafeBytes { source in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[position..<(position + count)]))
                }
                position += count
                return count
            }
        } catch {
            throw corrupt("\(error)")
        }
        return ClusterSnapshot(recordSequence: record, streamSequence: stream, rulesSource: rules, root: root, writeIDs: writeIDs)
    }
}
