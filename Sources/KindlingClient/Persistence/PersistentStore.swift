import Foundation
import KindlingCore
import KindlingProtocol
import Synchronization

/// What a database with persistence on keeps on disk, in one directory: the writes the server
/// has not acknowledged, in order, and the server's data of the locations listened to.
///
/// Writes go to `writes.log`, one line per write (`w`, its number, the request as sent) and one
/// per acknowledgement (`a`, the number). Each line is one `write(2)` before the write is shown
/// or sent, so a process killed at any point has every write it made on disk, and never one it
/// did not make; a torn last line (a power cut mid-write) is dropped. Opening the store keeps
/// the writes still unacknowledged and rewrites the log with only those.
///
/// The server's data lives in `cache/`, one file per listened location and query (its path,
/// the query's identifier, and the data in export form), written when it changes, at most once
/// a second; past the size limit, the files of locations no longer listened to go first, the
/// oldest first. It is a cache: a file lost or torn only costs a fresh read from the server.
final class PersistentStore: Sendable {
    /// A write kept until the server acknowledges it.
    struct PendingWrite: Sendable, Equatable {
        var token: Int
        var action: Action
    }

    let directory: URL
    let cacheLimit: Int
    private let state: Mutex<State>

    private struct State {
        var log: FileHandle?
        var nextToken: Int
        /// The cached data by `key(path:query:)`, with the hash last written.
        var cache: [String: CachedData]
    }

    /// One location's cached server data.
    struct CachedData: Sendable {
        var path: Path
        var queryID: String
        var node: Node
        var hash: String
    }

    /// What was on disk when the store opened.
    let pendingWrites: [PendingWrite]

    /// Opens (or creates) the store in `directory`. Throws when the directory cannot be used.
    init(directory: URL, cacheLimit: Int) throws(DatabaseError) {
        self.directory = directory
        self.cacheLimit = cacheLimit
        let files = FileManager.default
        let logURL = directory.appendingPathComponent("writes.log")
        do {
            try files.createDirectory(at: directory.appendingPathComponent("cache"), withIntermediateDirectories: true)
        } catch {
            throw .invalidArgument("Cannot use \(directory.path) for persistence: \(error.localizedDescription)")
        }
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        let pending = Self.unacknowledged(in: text)
        // Only the writes still pending, in a new log that replaces the old one whole.
        let fresh = pending.map { Self.line(for: $0) }.joined()
        let temporary = directory.appendingPathComponent("writes.log.new")
        guard files.createFile(atPath: temporary.path, contents: Data(fresh.utf8)),
            rename(temporary.path, logURL.path) == 0,
            let log = FileHandle(forWritingAtPath: logURL.path)
        else { throw .invalidArgument("Cannot write \(logURL.path) for persistence") }
        log.seekToEndOfFile()
        pendingWrites = pending
        state = Mutex(State(log: log, nextToken: (pending.map(\.token).max() ?? 0) + 1, cache: Self.loadCache(directory)))
    }

    // MARK: Writes

    /// Records a write before it is shown or sent; returns its number for `acknowledge`.
    func record(_ action: Action) -> Int {
        state.withLock { state in
            let token = state.nextToken
            state.nextToken += 1
            try? state.log?.write(contentsOf: Data(Self.line(for: PendingWrite(token: token, action: action)).utf8))
            return token
        }
    }

    /// Records that the server answered write `token` (taken or refused): it is not sent again.
    func acknowledge(_ token: Int) {
        state.withLock { state in try? state.log?.write(contentsOf: Data("a \(token)\n".utf8)) }
    }

    private static func line(for write: PendingWrite) -> String {
        "w \(write.token) \(ClientMessage.request(Request(number: write.token, action: write.action)).encoded)\n"
    }

    /// The writes of a log that were never acknowledged, in order; lines that do not read (a
    /// torn last line) are skipped.
    static func unacknowledged(in text: String) -> [PendingWrite] {
        var writes: [PendingWrite] = []
        var acknowledged: Set<Int> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let token = Int(parts[1]) else { continue }
            switch parts[0] {
            case "a": acknowledged.insert(token)
            case "w" where parts.count == 3:
                guard case .request(let request)? = try? ClientMessage.decode(String(parts[2])) else { continue }
                writes.append(PendingWrite(token: token, action: request.action))
            default: continue
            }
        }
        return writes.filter { !acknowledged.contains($0.token) }
    }

    // MARK: Cached server data

    static func key(path: Path, queryID: String) -> String { "\(path)|\(queryID)" }

    /// The cached server data for a listen, if any.
    func cached(path: Path, queryID: String) -> Node? {
        state.withLock { $0.cache[Self.key(path: path, queryID: queryID)]?.node }
    }

    /// Keeps `node` as the server data of the listen at `path` for `queryID` (nil: none is
    /// known), writing it when it changed; then trims the cache to its limit, keeping `active`.
    func store(_ entries: [(path: Path, queryID: String, node: Node)], active: Set<String>) {
        var changed: [CachedData] = []
        state.withLock { state in
            for entry in entries {
                let key = Self.key(path: entry.path, queryID: entry.queryID)
                let hash = entry.node.hash
                guard state.cache[key]?.hash != hash else { continue }
                let data = CachedData(path: entry.path, queryID: entry.queryID, node: entry.node, hash: hash)
                state.cache[key] = data
                changed.append(data)
            }
        }
        for data in changed { write(data) }
        trim(keeping: active)
    }

    private func fileURL(for key: String) -> URL {
        // FNV-1a of the key: a stable file name; the file itself names its location.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let name = String(hash, radix: 16)
        return directory.appendingPathComponent("cache").appendingPathComponent("\(name).json")
    }

    private func write(_ data: CachedData) {
        let record = JSONValue.object([
            JSONMember("path", .string(data.path.description)), JSONMember("query", .string(data.queryID)),
            JSONMember("data", (try? JSONParser.parse(data.node.jsonText(format: .export))) ?? .null),
        ])
        let url = fileURL(for: Self.key(path: data.path, queryID: data.queryID))
        let temporary = url.appendingPathExtension("new")
        if FileManager.default.createFile(atPath: temporary.path, contents: Data(JSONWriter.string(record).utf8)) {
            _ = rename(temporary.path, url.path)
        }
    }

    /// Removes the oldest files of locations not in `active` while the cache is over its limit.
    private func trim(keeping active: Set<String>) {
        let folder = directory.appendingPathComponent("cache")
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        guard let files = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: keys) else { return }
        var sized = files.compactMap { url -> (url: URL, size: Int, date: Date)? in
            guard let values = try? url.resourceValues(forKeys: Set(keys)) else { return nil }
            return (url, values.fileSize ?? 0, values.contentModificationDate ?? .distantPast)
        }
        var total = sized.reduce(0) { $0 + $1.size }
        guard total > cacheLimit else { return }
        let activeFiles = Set(active.map { fileURL(for: $0).lastPathComponent })
        sized.sort { $0.date < $1.date }
        for file in sized where total > cacheLimit && !activeFiles.contains(file.url.lastPathComponent) {
            try? FileManager.default.removeItem(at: file.url)
            total -= file.size
            state.withLock { state in state.cache = state.cache.filter { fileURL(for: $0.key) != file.url } }
        }
    }

    private static func loadCache(_ directory: URL) -> [String: CachedData] {
        let folder = directory.appendingPathComponent("cache")
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        var cache: [String: CachedData] = [:]
        for file in files where file.pathExtension == "json" {
            guard let text = try? String(contentsOf: file, encoding: .utf8), let record = try? JSONParser.parse(text),
                let pathText = record["path"]?.stringValue, let path = try? Path(pathText), let queryID = record["query"]?.stringValue,
                let data = record["data"], let node = try? Node(json: data)
            else { continue }
            cache[key(path: path, queryID: queryID)] = CachedData(path: path, queryID: queryID, node: node, hash: node.hash)
        }
        return cache
    }

    /// Closes the log; nothing is recorded after.
    func close() {
        state.withLock { state in
            try? state.log?.close()
            state.log = nil
        }
    }
}
