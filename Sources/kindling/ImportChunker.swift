import KindlingCore

/// Cuts a JSON document, read token by token, into atomic steps of about `chunkBytes` of its
/// text each, holding no more than about one step in memory, as firebase-tools' `database:import`
/// cuts a file into PATCHes of 1 MB.
///
/// Each finished value is kept under its parent until the values kept pass `chunkBytes`; then
/// they all go out as one step, each at its own path, and the parents they came from are marked
/// split: a split parent is never sent whole, its later children go out at their own paths as
/// they finish. A value that finishes before a step was cut from it goes to its parent whole, so
/// small subtrees travel in one piece and a document smaller than a step is one step. The steps'
/// paths never overlap, so applying them in order leaves exactly the document. `.priority` and
/// `.value` members stay with their parent (a split parent's priority goes out when it ends).
///
/// A pure value: the same tokens and `chunkBytes` give the same steps, which is what lets an
/// interrupted import resume by reading the file again and skipping the steps already applied.
struct ImportChunker {
    /// A value to write at `path` (relative to the import's path).
    struct Entry: Equatable {
        var path: [String]
        var value: JSONValue
    }

    /// One atomic write: its entries, and the byte of the text just past the last token it took.
    struct Step: Equatable {
        var entries: [Entry]
        var end: Int
        /// The bytes of text its values took.
        var bytes: Int
    }

    /// An object or array being read.
    private struct Frame {
        /// Its name in its parent; nil for the document itself.
        var name: String?
        var isArray: Bool
        var start: Int
        var nextIndex = 0
        /// Finished children not yet sent.
        var members: [JSONMember] = []
        var memberBytes = 0
        /// Some of its children were sent: it is never sent whole.
        var split = false
        var priority: JSONValue?
        /// It holds `.value` or `.sv`: a leaf in object form, never cut.
        var isLeaf = false
    }

    let chunkBytes: Int
    /// How deep a path may go below the import's path.
    let depthLimit: Int

    private var frames: [Frame] = []
    private var pendingName: String?
    /// Children of split parents that ended, not yet sent.
    private var loose: [Entry] = []
    private var looseBytes = 0
    private var keptBytes = 0
    private var whole: JSONValue?

    init(chunkBytes: Int, depthLimit: Int = Path.maxDepth) {
        self.chunkBytes = max(1, chunkBytes)
        self.depthLimit = depthLimit
    }

    /// Takes the next token; a step when one is complete.
    mutating func take(_ token: JSONStreamReader.Token) throws(ImportError) -> Step? {
        switch token.event {
        case .key(let name):
            try checkName(name, at: token.start)
            pendingName = name
            return nil
        case .objectStart, .arrayStart:
            let name = try childName(at: token.start)
            frames.append(Frame(name: name, isArray: token.event == .arrayStart, start: token.start))
            return nil
        case .value(let value):
            return try finished(value, name: try childName(at: token.start), bytes: token.end - token.start, end: token.end)
        case .objectEnd, .arrayEnd:
            return try close(end: token.end)
        }
    }

    /// The last step, once the reader has read the whole document; nil when every value went
    /// out in earlier steps.
    mutating func finish(end: Int) -> Step? {
        if let whole {
            self.whole = nil
            return Step(entries: [Entry(path: [], value: whole)], end: end, bytes: end)
        }
        return cut(end: end)
    }

    // MARK: - Names and depth

    private func checkName(_ name: String, at offset: Int) throws(ImportError) {
        guard let frame = frames.last else { return }
        switch name {
        case ".priority": return
        case ".value", ".sv":
            if frame.split || frame.members.contains(where: { !$0.key.hasPrefix(".") }) {
                throw .invalidData(offset: offset, "\"\(name)\" beside other children")
            }
        default:
            if frame.isLeaf { throw .invalidData(offset: offset, "a child beside \".value\" or \".sv\"") }
            do {
                _ = try Key(name)
            } catch {
                throw .invalidKey(offset: offset, error)
            }
            if frames.count > depthLimit { throw .tooDeep(offset: offset, limit: depthLimit) }
        }
    }

    /// The name of the value starting now in the innermost frame (an array's next index).
    private mutating func childName(at offset: Int) throws(ImportError) -> String? {
        guard let index = frames.indices.last else { return nil }
        if frames[index].isArray {
            if frames.count > depthLimit { throw .tooDeep(offset: offset, limit: depthLimit) }
            defer { frames[index].nextIndex += 1 }
            return String(frames[index].nextIndex)
        }
        defer { pendingName = nil }
        if pendingName == ".value" || pendingName == ".sv" { frames[index].isLeaf = true }
        return pendingName
    }

    // MARK: - Finished values

    /// A value that finished: kept under its parent, or the whole document.
    private mutating func finished(_ value: JSONValue, name: String?, bytes: Int, end: Int) throws(ImportError) -> Step? {
        guard let index = frames.indices.last, let name else {
            whole = value
            return nil
        }
        if name == ".priority" {
            frames[index].priority = value
            return nil
        }
        frames[index].members.append(JSONMember(name, value))
        frames[index].memberBytes += bytes
        keptBytes += bytes
        return keptBytes >= chunkBytes ? cut(end: end) : nil
    }

    private mutating func close(end: Int) throws(ImportError) -> Step? {
        let frame = frames.removeLast()
        keptBytes -= frame.memberBytes
        if !frame.split {
            var members = frame.members
            if let priority = frame.priority { members.append(JSONMember(".priority", priority)) }
            let value: JSONValue = frame.isArray ? .array(members.map(\.value)) : .object(members)
            return try finished(value, name: frame.name, bytes: end - frame.start, end: end)
        }
        let path = self.path(to: frames.count) + (frame.name.map { [$0] } ?? [])
        for member in frame.members { loose.append(Entry(path: path + [member.key], value: member.value)) }
        if let priority = frame.priority { loose.append(Entry(path: path + [".priority"], value: priority)) }
        looseBytes += frame.memberBytes
        keptBytes += frame.memberBytes
        return keptBytes >= chunkBytes ? cut(end: end) : nil
    }

    /// The path of the frame at `depth` (its parents' names and its own).
    private func path(to depth: Int) -> [String] {
        frames.prefix(depth).compactMap(\.name)
    }

    /// Sends everything kept: the loose entries, and each open frame's finished children (which
    /// splits it), but not a leaf in object form's.
    private mutating func cut(end: Int) -> Step? {
        var entries = loose
        var bytes = looseBytes
        loose = []
        looseBytes = 0
        var deepestSplit = -1
        for index in frames.indices where !frames[index].isLeaf && !frames[index].members.isEmpty {
            let path = self.path(to: index + 1)
            entries += frames[index].members.map { Entry(path: path + [$0.key], value: $0.value) }
            bytes += frames[index].memberBytes
            frames[index].members = []
            frames[index].memberBytes = 0
            deepestSplit = index
        }
        // A parent of a split frame cannot be sent whole either: it would replace what was sent.
        for index in frames.indices where index <= deepestSplit { frames[index].split = true }
        keptBytes -= bytes
        guard !entries.isEmpty else { return nil }
        return Step(entries: entries, end: end, bytes: bytes)
    }
}
