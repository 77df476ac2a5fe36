import Foundation
import KindlingCore
import KindlingTesting
import Logging
import Synchronization
import Testing

@testable import KindlingServer

/// History on real files over simulated time: a rebuild of any instant equals the writes replayed
/// up to it, through snapshots, retirements and purges.
struct NamespaceHistoryTests {
    /// A small deterministic generator, so a failing history can be run again.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Writes a namespace's files as a server would, at chosen instants.
    struct SimulatedNamespace {
        let directory: String
        let history: NamespaceHistory
        var tree = DataTree()
        var sequence: UInt64 = 0
        var segmentStart: UInt64 = 1
        /// Every record, for the expected trees.
        var records: [LogRecord] = []

        init(
            policy: HistoryPolicy?, directory: String = NSTemporaryDirectory() + "kindling-history-\(UUID().uuidString)",
            compression: NamespaceHistory.Compression = .inline, activity: (@Sendable () -> Int)? = nil
        ) throws {
            self.directory = directory
            try StorageLayout.createDirectory(directory)
            history = NamespaceHistory(
                directory: directory, policy: policy, compression: compression, activity: activity, logger: Logger(label: "history-test"))
        }

        mutating func commit(_ write: Write, at time: Int64) throws {
            sequence += 1
            let record = LogRecord(sequence: sequence, write: write, time: time)
            tree.apply(write)
            records.append(record)
            let path = StorageLayout.segmentPath(directory, startingAt: segmentStart)
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.seekToEnd()
            try handle.write(contentsOf: record.encoded())
            try handle.close()
        }

        /// A snapshot of now, stamped `time` (when the background writer finished it), the log
        /// rotated behind it, and the retirement run at `now`.
        mutating func snapshot(stamped time: Int64, now: Int64) throws {
            let path = StorageLayout.snapshotPath(directory, sequence: sequence)
            _ = try SnapshotFile.write(tree.root, to: path)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: Double(time) / 1000)], ofItemAtPath: path)
            segmentStart = sequence + 1
            history.retire(through: sequence, now: now)
        }

        /// The tree replayed from the records committed at or before `time`.
        func expected(at time: Int64) -> Node {
            var tree = DataTree()
            for record in records where record.time <= time { tree.apply(record.write) }
            return tree.root
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    static let keys = ["a", "b", "c", "ü", "😀"].compactMap { try? Key($0) }

    /// A path the test spells out (nil never happens for these).
    static func path(_ text: String) -> Path { (try? Path(text)) ?? .root }

    static func randomPath(_ random: inout SplitMix) -> Path {
        Path(keys: (0..<Int.random(in: 0...3, using: &random)).map { _ in keys[Int.random(in: 0..<keys.count, using: &random)] })
    }

    static func randomNode(_ random: inout SplitMix) -> Node {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .empty
        case 1: return Node(.number(Double(Int.random(in: -5...5, using: &random)) / 4))
        case 2: return Node(.string(String(repeating: "x", count: Int.random(in: 0...40, using: &random))))
        case 3: return Node(.bool(Bool.random(using: &random)))
        default:
            var writer = JSONWriter()
            writer.write(.object([JSONMember("n", .number(Double(Int.random(in: 0...9, using: &random)))), JSONMember("k", .string("v"))]))
            return (try? Node(json: JSONParser.parse(writer.bytes), at: .root)) ?? .empty
        }
    }

    static func randomWrite(_ random: inout SplitMix) -> Write {
        let path = randomPath(&random)
        guard Bool.random(using: &random) else { return .set(path, randomNode(&random)) }
        var used = Set<String>()
        var entries: [MergeEntry] = []
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            guard used.insert(key.string).inserted else { continue }
            entries.append(MergeEntry(path: Path(keys: [key]), node: randomNode(&random)))
        }
        return .merge(path, entries)
    }

    static func export(_ node: Node) -> String {
        var writer = JSONWriter()
        node.write(to: &writer, format: .export)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func aRebuildOfAnyInstantIsTheReplayUpToIt(seed: UInt64) throws {
        var random = SplitMix(state: seed)
        let spacing = [Duration.zero, .milliseconds(300), .seconds(1)][Int.random(in: 0..<3, using: &random)]
        var namespace = try SimulatedNamespace(policy: HistoryPolicy(retention: .seconds(3600), maxBytes: .max, snapshotSpacing: spacing))
        defer { namespace.remove() }
        var now: Int64 = 1_000_000
        for _ in 0..<Int.random(in: 60...160, using: &random) {
            // Batches share an instant; time never runs back.
            now += Int64.random(in: 0...40, using: &random)
            try namespace.commit(Self.randomWrite(&random), at: now)
            if Int.random(in: 0..<12, using: &random) == 0 {
                // The snapshot finishes a little later, while writes may go on.
                try namespace.snapshot(stamped: now + Int64.random(in: 0...30, using: &random), now: now)
            }
        }
        let first = try #require(namespace.records.first).time
        let instants = [first - 1, first, now, now + 1] + (0..<40).map { _ in Int64.random(in: first...now, using: &random) }
        for instant in instants {
            let rebuilt = try namespace.history.tree(at: instant)
            #expect(Self.export(rebuilt) == Self.export(namespace.expected(at: instant)), "seed \(seed), instant \(instant)")
            let path = Self.randomPath(&random)
            #expect(Self.export(rebuilt.child(at: path)) == Self.export(namespace.expected(at: instant).child(at: path)))
        }
    }

    @Test func anInPlaceRestoreAndItsUndo() throws {
        let directory = NSTemporaryDirectory() + "kindling-restore-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let folder = StorageLayout.directory(dataDirectory: directory, namespace: "app")
        var namespace = try SimulatedNamespace(policy: .keepAll, directory: folder)
        let logger = Logger(label: "history-test")
        let start = HistoryTime.now() - 10_000
        let users = try Node(json: JSONParser.parse(#"{"ada":{"n":1},"bob":{"n":2}}"#), at: Self.path("/users"))
        try namespace.commit(.set(Self.path("/users"), users), at: start)
        try namespace.commit(.set(Self.path("/rooms/r1"), Node(.string("open"))), at: start + 1)
        try namespace.snapshot(stamped: start + 2, now: start + 2)
        // The mistake.
        try namespace.commit(.set(Self.path("/users"), .empty), at: start + 5_000)
        try namespace.commit(.set(Self.path("/rooms/r2"), Node(.string("new"))), at: start + 5_001)

        let restoredAt = HistoryTime.now()
        let bytes = try OfflineDataDirectory.restore(
            directory: directory, namespace: "app", at: start + 1, path: Self.path("/users"), into: "app", logger: logger)
        #expect(bytes == #"{"ada":{"n":1},"bob":{"n":2}}"#.utf8.count)
        var root = try NamespaceStorage.recover(directory: folder, repair: false, logger: logger).root
        #expect(Self.export(root) == #"{"rooms":{"r1":"open","r2":"new"},"users":{"ada":{"n":1},"bob":{"n":2}}}"#)

        // The restore is in the history: restoring the instant before it undoes it.
        _ = try OfflineDataDirectory.restore(
            directory: directory, namespace: "app", at: restoredAt - 1, path: Self.path("/users"), into: "app", logger: logger)
        root = try NamespaceStorage.recover(directory: folder, repair: false, logger: logger).root
        #expect(Self.export(root) == #"{"rooms":{"r1":"open","r2":"new"}}"#)

        // Into another namespace, the whole tree.
        _ = try OfflineDataDirectory.restore(directory: directory, namespace: "app", at: start + 1, path: .root, into: "copy", logger: logger)
        let copy = StorageLayout.directory(dataDirectory: directory, namespace: "copy")
        root = try NamespaceStorage.recover(directory: copy, repair: false, logger: logger).root
        #expect(Self.export(root) == #"{"rooms":{"r1":"open"},"users":{"ada":{"n":1},"bob":{"n":2}}}"#)

        let changes = try OfflineDataDirectory.changes(
            directory: directory, namespace: "app", path: Self.path("/users/ada"), from: 0, to: .max, limit: 10, logger: logger)
        #expect(changes.map(\.kind) == [.set, .remove, .set, .remove])
        #expect(changes.map(\.path) == [Self.path("/users"), Self.path("/users"), Self.path("/users"), Self.path("/users")])
        #expect(changes.first?.time == start)
        let recent = try OfflineDataDirectory.changes(
            directory: directory, namespace: "app", path: Self.path("/users"), from: start + 1, to: start + 6_000, limit: 10, logger: logger)
        #expect(recent.map(\.sequence) == [3])
        #expect(
            try OfflineDataDirectory.changes(
                directory: directory, namespace: "app", path: Self.path("/rooms"), from: 0, to: .max, limit: 1, logger: logger
            ).map(\.sequence) == [4])
    }

    @Test func anInstantBeforeTheKeptHistoryIsRefusedWithTheEarliest() throws {
        var namespace = try SimulatedNamespace(policy: HistoryPolicy(retention: .seconds(10), maxBytes: .max, snapshotSpacing: .zero))
        defer { namespace.remove() }
        for time in stride(from: Int64(1_000), through: 30_000, by: 1_000) {
            try namespace.commit(.set(Self.path("/n"), Node(.number(Double(time)))), at: time)
            if time % 5_000 == 0 { try namespace.snapshot(stamped: time, now: time) }
        }
        // Purged at 30 s with 10 s kept: the newest base at or before 20 s (the snapshot at 20 s)
        // is the oldest instant left.
        #expect(throws: HistoryError.beforeHistory(earliest: 20_000)) { try namespace.history.tree(at: 19_999) }
        #expect(try namespace.history.tree(at: 20_500).child(at: Self.path("/n")) == Node(.number(20_000)))
        #expect(try namespace.history.tree(at: 27_000).child(at: Self.path("/n")) == Node(.number(27_000)))
    }

    @Test func aRetirementCutShortIsFinishedAndAMissingSegmentIsAGap() throws {
        var namespace = try SimulatedNamespace(policy: HistoryPolicy(retention: .seconds(3600), maxBytes: .max, snapshotSpacing: .zero))
        defer { namespace.remove() }
        for time in 1...9 as ClosedRange<Int64> { try namespace.commit(.set(Self.path("/n"), Node(.number(Double(time)))), at: time) }
        let live = StorageLayout.segmentPath(namespace.directory, startingAt: 1)
        let copy = try Data(contentsOf: URL(fileURLWithPath: live))
        try namespace.snapshot(stamped: 9, now: 9)
        // Crashes between steps: a segment both live and kept, and kept both plain and compressed.
        try copy.write(to: URL(fileURLWithPath: live))
        let plain = StorageLayout.historyPlainSegmentPath(namespace.directory, startingAt: 1)
        try copy.write(to: URL(fileURLWithPath: plain))
        for time in 10...12 as ClosedRange<Int64> { try namespace.commit(.set(Self.path("/n"), Node(.number(Double(time)))), at: time) }
        #expect(try namespace.history.tree(at: 5).child(at: Self.path("/n")) == Node(.number(5)))
        #expect(try namespace.history.tree(at: 11).child(at: Self.path("/n")) == Node(.number(11)))
        try namespace.snapshot(stamped: 12, now: 12)
        #expect(!FileManager.default.fileExists(atPath: live))
        #expect(!FileManager.default.fileExists(atPath: plain))
        #expect(try namespace.history.tree(at: 5).child(at: Self.path("/n")) == Node(.number(5)))

        // A kept segment lost: instants that need it cannot be rebuilt, others still can.
        for time in 13...14 as ClosedRange<Int64> { try namespace.commit(.set(Self.path("/n"), Node(.number(Double(time)))), at: time) }
        try FileManager.default.removeItem(atPath: StorageLayout.historySegmentPath(namespace.directory, startingAt: 10))
        try FileManager.default.removeItem(atPath: StorageLayout.historySnapshotPath(namespace.directory, sequence: 9))
        #expect(throws: HistoryError.gap(after: 9)) { try namespace.history.tree(at: 11) }
        #expect(try namespace.history.tree(at: 14).child(at: Self.path("/n")) == Node(.number(14)))
    }

    @Test func aRetiredSegmentIsRenamedAtOnceAndCompressedInTheBackground() async throws {
        var namespace = try SimulatedNamespace(policy: .standard, compression: .background)
        defer { namespace.remove() }
        for time in 1...20 as ClosedRange<Int64> { try namespace.commit(.set(Self.path("/n"), Node(.number(Double(time)))), at: time) }
        try namespace.snapshot(stamped: 20, now: 20)
        #expect(!FileManager.default.fileExists(atPath: StorageLayout.segmentPath(namespace.directory, startingAt: 1)))
        // Readable in either form, before and after the pass.
        #expect(try namespace.history.tree(at: 7).child(at: Self.path("/n")) == Node(.number(7)))
        let compressed = StorageLayout.historySegmentPath(namespace.directory, startingAt: 1)
        let plain = StorageLayout.historyPlainSegmentPath(namespace.directory, startingAt: 1)
        #expect(
            try await eventually(within: .seconds(20)) {
                FileManager.default.fileExists(atPath: compressed) && !FileManager.default.fileExists(atPath: plain)
            })
        #expect(try namespace.history.tree(at: 7).child(at: Self.path("/n")) == Node(.number(7)))
    }

    @Test func aBusyLogIsNotCompressedUntilItIsQuiet() async throws {
        // Busy: the log's activity changes at every look, so the compressor never sees it quiet.
        let busy = Mutex(true)
        let looks = Mutex(0)
        let activity: @Sendable () -> Int = {
            looks.withLock { count in
                count += 1
                return busy.withLock { $0 } ? count : 0
            }
        }
        var namespace = try SimulatedNamespace(policy: .standard, compression: .background, activity: activity)
        defer { namespace.remove() }
        for time in 1...20 as ClosedRange<Int64> { try namespace.commit(.set(Self.path("/n"), Node(.number(Double(time)))), at: time) }
        try namespace.snapshot(stamped: 20, now: 20)
        let plain = StorageLayout.historyPlainSegmentPath(namespace.directory, startingAt: 1)
        #expect(try await eventually(within: .seconds(20)) { looks.withLock { $0 } >= 3 })
        #expect(FileManager.default.fileExists(atPath: plain))
        busy.withLock { $0 = false }
        #expect(try await eventually(within: .seconds(20)) { !FileManager.default.fileExists(atPath: plain) })
        #expect(FileManager.default.fileExists(atPath: StorageLayout.historySegmentPath(namespace.directory, startingAt: 1)))
    }

    @Test func recordsKeepTheirTimeAndOlderOnesHaveNone() throws {
        let record = LogRecord(sequence: 7, write: .set(Self.path("/a"), Node(.number(1))), time: 1_733_400_000_123)
        let bytes = record.encoded()
        let body = bytes[LogRecord.headerSize...]
        #expect(try LogRecord.decode(body: body) == record)
        #expect(LogRecord.time(ofBody: body) == 1_733_400_000_123)
        let old = LogRecord(sequence: 8, write: .set(Self.path("/a"), try Node(json: JSONParser.parse(#"{"t":5}"#), at: Self.path("/a"))))
        let oldBody = old.encoded()[LogRecord.headerSize...]
        #expect(LogRecord.time(ofBody: oldBody) == 0)
        for value: Int64 in [1, 7, 10, 99, 1_733_400_000_123, .max] {
            let body = LogRecord(sequence: 9, write: old.write, time: value).encoded()[LogRecord.headerSize...]
            #expect(body.suffix(String(value).utf8.count + 1) == ArraySlice(Array(String(value).utf8) + [UInt8(ascii: "}")]))
            if value < 1_000_000_000_000_000 { #expect(LogRecord.time(ofBody: body) == value) }
        }
        #expect(try LogRecord.decode(body: oldBody).time == 0)
    }
}
