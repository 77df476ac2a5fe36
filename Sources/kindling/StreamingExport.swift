import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer
import NIOHTTP1

/// `kindling export` through a server: the tree read in many small REST reads and written out
/// as it comes, so neither side ever holds the whole of a large namespace, and no one read
/// nears the REST limits.
///
/// Each object is walked in key order. A child whose size nothing tells yet (the first, and
/// any after a child larger than a batch) is found with a shallow read and walked the same way
/// (a leaf is read whole); then the size of the children read in the last round says how many
/// make about `chunkBytes`, and that many, at most four times as many as in the last round, are
/// read at once (`orderBy="$key"&startAfter=…&limitToFirst=…`). So a wide list is read in
/// batches of about `chunkBytes`, and a large subtree is never read whole unless its siblings
/// were small (then it is read in one batch: the walk cannot know sizes before it reads). The
/// children's text is copied as the server wrote it, and the object's own priority is read last
/// (`<path>/.priority`), so the output is byte for byte what one `format=export` read of the
/// whole would give, which is what an import of an export-form file reads back. The walk is not
/// a snapshot: writes made during it may show in part.
struct StreamingExport {
    var target: RemoteTarget
    /// Priorities and `.value` (export form), or plain JSON without them.
    var exportForm: Bool
    var chunkBytes: Int
    var output: ExportFileWriter
    private var reads = 0
    private var progress: ProgressBar

    init(target: RemoteTarget, exportForm: Bool, chunkBytes: Int, output: ExportFileWriter) {
        self.target = target
        self.exportForm = exportForm
        self.chunkBytes = chunkBytes
        self.output = output
        progress = ProgressBar(label: "export", total: nil)
    }

    /// Writes the data at `path`.
    mutating func run(path: [String]) async throws {
        let interrupt = InterruptSignal()
        let started = ContinuousClock.now
        try await node(at: path, interrupt: interrupt)
        progress.finish(output.count, "\(reads) reads, \((ContinuousClock.now - started).components.seconds) s")
    }

    private mutating func node(at path: [String], interrupt: InterruptSignal) async throws {
        // A leaf has no first child: the listing is null for it as for nothing, and either is
        // read whole (a leaf with its priority in export form).
        if case .object(let members) = try JSONParser.parse(try await read(path, "&shallow=true&limitToFirst=1")), !members.isEmpty {
            try await children(of: path, interrupt: interrupt)
        } else {
            try write(try await read(path, format))
        }
    }

    /// Writes the object at `path`: its children in key order, then its priority.
    private mutating func children(of path: [String], interrupt: InterruptSignal) async throws {
        try write(Array("{".utf8))
        var last: String?
        var batch = 1
        while true {
            if interrupt.isRaised {
                progress.interrupt()
                printError("export: interrupted; the output is incomplete and was not kept")
                throw ExitCode(130)
            }
            let before = output.count
            let count: Int
            if batch == 1 {
                // One child of unknown size: walked.
                guard case .object(let next) = try JSONParser.parse(try await read(path, "&shallow=true&limitToFirst=1" + after(last))),
                    let key = next.first?.key
                else { break }
                try writeName(key, first: last == nil)
                try await node(at: path + [key], interrupt: interrupt)
                last = key
                count = 1
            } else {
                let text = try await read(path, "&orderBy=%22%24key%22&limitToFirst=\(batch)" + after(last) + format)
                let members = try Self.members(of: text)
                for member in members {
                    try writeName(member.key, first: last == nil)
                    try text.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[member.value])) }
                    last = member.key
                }
                if members.count < batch { break }
                count = members.count
            }
            let bytes = max(1, output.count - before)
            batch = max(1, min(10_000, 4 * count, count * chunkBytes / bytes))
            progress.update(output.count, "\(reads) reads")
        }
        if exportForm {
            let priority = try await read(path + [".priority"], "")
            if priority != Array("null".utf8) { try write(Array(#",".priority":"#.utf8) + priority) }
        }
        try write(Array("}".utf8))
    }

    /// `format=export` when writing the export form.
    private var format: String { exportForm ? "&format=export" : "" }

    /// The query parameter that starts a listing after `key` (quoted, so any key is read as one).
    private func after(_ key: String?) -> String {
        guard let key else { return "" }
        return "&startAfter=" + Self.queryEncoded(JSONWriter.string(.string(key)))
    }

    private func writeName(_ key: String, first: Bool) throws {
        var writer = JSONWriter()
        if !first { writer.writeRaw(",".utf8) }
        writer.write(key)
        writer.writeRaw(":".utf8)
        try write(writer.bytes)
    }

    private func write(_ bytes: [UInt8]) throws {
        do {
            try output.write(bytes)
        } catch {
            printError("error: \(error)")
            throw ExitCode(74)
        }
    }

    /// One REST read of `path` with `parameters`.
    private mutating func read(_ path: [String], _ parameters: String) async throws -> [UInt8] {
        reads += 1
        return try await target.get(target.restURL(path: path.joined(separator: "/"), parameters))
    }

    /// The members of an object the server wrote (or the elements of an array it wrote for a
    /// plain read of keys 0, 1, 2…), each with the byte range of its value, without the
    /// object's `.priority`.
    static func members(of text: [UInt8]) throws -> [(key: String, value: Range<Int>)] {
        var reader = JSONStreamReader()
        reader.feed(text)
        reader.finish()
        var members: [(key: String, value: Range<Int>)] = []
        var depth = 0
        var isArray = false
        var key: String?
        var start = 0
        var index = 0
        while let token = try reader.next() {
            switch token.event {
            case .key(let name) where depth == 1:
                key = name
                continue
            case .objectStart, .arrayStart:
                depth += 1
                if depth == 1 {
                    isArray = token.event == .arrayStart
                    continue
                }
                if depth == 2 { start = token.start }
                continue
            case .objectEnd, .arrayEnd:
                depth -= 1
                if depth != 1 { continue }
            case .value(let value) where depth == 1:
                start = token.start
                if isArray, value == .null {
                    index += 1
                    continue
                }
            default:
                continue
            }
            let name = isArray ? String(index) : key ?? ""
            index += 1
            if name != ".priority" { members.append((name, start..<token.end)) }
        }
        return members
    }

    /// Text for a query parameter: everything but unreserved characters percent-encoded.
    static func queryEncoded(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))
            ?? text
    }
}
