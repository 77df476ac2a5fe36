import KindlingCore
import NATSClient

/// A namespace's past in cluster mode, read and kept in JetStream (`ClusterHistoryIndex` says
/// what is kept where). Any node reads it, straight from the stream and the object store, so an
/// as-of read on a follower sees every acknowledged write; only the leader keeps snapshots for
/// it and purges what its `HistoryPolicy` no longer keeps.
struct ClusterHistory: Sendable {
    let namespace: String
    let node: ClusterNode

    /// How long one read of the past may take before it is given up (NATS out of reach, say).
    static let readTimeout: Duration = .seconds(60)

    private var subject: String { ClusterNode.logSubject(namespace) }

    // MARK: Keeping (the leader)

    /// After the leader wrote `snapshot` (`bytes`, taken at `time`) as the namespace's newest:
    /// keeps it for history when the policy's spacing says so, drops what the policy no longer
    /// keeps, and returns whether it kept it and the stream sequence the log may be purged
    /// behind: the oldest base's, never past `previous` (the snapshot before this one, the
    /// margin followers reading behind need), nil for none. The index is written before the
    /// log is purged and dropped snapshots are deleted after, so a crash between the steps
    /// leaves only more kept than needed.
    func keep(
        _ snapshot: ClusterSnapshot, bytes: [UInt8], takenAt time: Int64, logBytes: Int, previous: UInt64, policy: HistoryPolicy, now: Int64
    ) async throws(HistoryError) -> (kept: Bool, purgeBefore: UInt64?) {
        var index = try await index()
        var kept = false
        if index.keeps(snapshotAt: time, policy: policy), index.bases.last.map({ $0.streamSequence < snapshot.streamSequence }) ?? true {
            let base = ClusterHistoryIndex.Base(
                streamSequence: snapshot.streamSequence, recordSequence: snapshot.recordSequence, time: time, bytes: bytes.count,
                logBytes: logBytes)
            do {
                try await node.snapshots.put(base.objectName(namespace), bytes)
            } catch {
                throw .storage("\(error)")
            }
            index.bases.append(base)
            kept = true
        }
        let plan = index.purge(policy: policy, now: now)
        if kept || !plan.dropped.isEmpty {
            do {
                try await node.snapshots.put(ClusterHistoryIndex.objectName(namespace), plan.kept.encoded())
            } catch {
                throw .storage("\(error)")
            }
        }
        for base in plan.dropped { try? await node.snapshots.delete(base.objectName(namespace)) }
        let oldest = plan.kept.bases.first.flatMap { $0.streamSequence > 0 ? $0.streamSequence + 1 : nil }
        return (kept, oldest.flatMap { previous > 0 ? min($0, previous + 1) : nil })
    }

    /// With history off: removes what an earlier run kept, so a history turned on again later
    /// never starts from bases whose log was purged meanwhile.
    func forget() async {
        guard let bytes = try? await node.snapshots.get(ClusterHistoryIndex.objectName(namespace)) else { return }
        for base in ClusterHistoryIndex.decode(bytes)?.bases ?? [] where base.streamSequence > 0 {
            try? await node.snapshots.delete(base.objectName(namespace))
        }
        try? await node.snapshots.delete(ClusterHistoryIndex.objectName(namespace))
    }

    // MARK: Reading

    /// The tree at `path` as it was at `time`: the newest base no later than it, with every
    /// later write committed at or before it.
    func node(at path: Path, time: Int64) async throws(HistoryError) -> Node {
        try await bounded {
            let index = try await self.index()
            guard let base = index.base(atOrBefore: time) else { throw HistoryError.beforeHistory(earliest: index.earliest) }
            var tree = DataTree(root: try await self.load(base))
            try await self.replay(after: base, earliest: index.earliest, until: { $0.time > time }) { tree.apply($0.write) }
            return tree.root.child(at: path)
        }
    }

    /// The writes committed from `from` through `to` that wrote at, above or below `path`, the
    /// most recent `limit` of them, oldest first.
    func changes(at path: Path, from: Int64, through to: Int64, limit: Int) async throws(HistoryError) -> [HistoryChange] {
        try await bounded {
            let index = try await self.index()
            // Every write up to a base older than `from` is older still.
            guard let start = index.bases.last(where: { $0.time < from }) ?? index.bases.first else { return [] }
            var found: [HistoryChange] = []
            try await self.replay(after: start, earliest: index.earliest, until: { $0.time > to }) { record in
                if record.time >= from, HistoryChange.touches(record, path) {
                    found.append(HistoryChange(record))
                    if found.count > limit { found.removeFirst() }
                }
            }
            return found
        }
    }

    /// The stored index; without one, the empty start alone while the log still reaches back
    /// to the namespace's first write (history was never kept, or was just turned on).
    func index() async throws(HistoryError) -> ClusterHistoryIndex {
        let bytes: [UInt8]?
        do {
            bytes = try await node.snapshots.get(ClusterHistoryIndex.objectName(namespace))
        } catch {
            throw .storage("\(error)")
        }
        if let bytes {
            guard let index = ClusterHistoryIndex.decode(bytes) else { throw .storage("the history index of \(namespace) is damaged") }
            return index
        }
        return ClusterHistoryIndex(bases: try await logStartsAtFirstWrite() ? [.emptyStart] : [])
    }

    /// True when the namespace's log still holds its first write (or is empty): nothing of it
    /// was purged, so the empty tree is a base.
    private func logStartsAtFirstWrite() async throws(HistoryError) -> Bool {
        guard try await lastStreamSequence() > 0 else { return true }
        let first = try await firstRecordSequence()
        return first.map { $0 <= 1 } ?? true
    }

    /// The record sequence the namespace's first stored message starts with.
    private func firstRecordSequence() async throws(HistoryError) -> UInt64? {
        let reader: OrderedConsumer
        do {
            reader = try await node.jetStream.orderedConsumer(stream: ClusterNode.logStream, startSequence: 1, filterSubject: subject)
        } catch {
            throw .storage("\(error)")
        }
        var messages = reader.makeAsyncIterator()
        let message = await messages.next()
        await reader.stop()
        guard let message else { throw .storage("the log of \(namespace) could not be read") }
        return try Self.records(in: message).first
    }

    /// The snapshot a base starts from (the empty tree for the empty start).
    private func load(_ base: ClusterHistoryIndex.Base) async throws(HistoryError) -> Node {
        guard base.streamSequence > 0 else { return .empty }
        let bytes: [UInt8]?
        do {
            bytes = try await node.snapshots.get(base.objectName(namespace))
        } catch {
            throw .storage("\(error)")
        }
        // Purged since the index was read: the instant left the window meanwhile.
        guard let bytes else { throw .beforeHistory(earliest: nil) }
        do {
            return try ClusterSnapshot.decode(bytes, name: base.objectName(namespace)).root
        } catch {
            throw .storage("\(error)")
        }
    }

    /// Hands `body` every record after `base`, in order, up to the first for which `until` is
    /// true or the last one stored. A rules change takes a record sequence of its own and is
    /// passed over; a record missing is a `HistoryError.gap`, or, when the log's start was
    /// purged while this read began behind it, `beforeHistory`.
    private func replay(
        after base: ClusterHistoryIndex.Base, earliest: Int64?, until: (LogRecord) -> Bool, _ body: (LogRecord) -> Void
    ) async throws(HistoryError) {
        let last = try await lastStreamSequence()
        guard last > base.streamSequence else { return }
        let reader: OrderedConsumer
        do {
            reader = try await node.jetStream.orderedConsumer(
                stream: ClusterNode.logStream, startSequence: base.streamSequence + 1, filterSubject: subject, heartbeat: .seconds(1))
        } catch {
            throw .storage("\(error)")
        }
        var next = base.recordSequence + 1
        // As a follower reads it: only batches that continue the chain count (a void batch of a
        // forked log holds no acknowledged write, and reuses record sequences a real one has).
        var chain = LogChain(head: base.streamSequence)
        do throws(HistoryError) {
            reading: for await message in reader {
                let previous = message.headers?[ReplicatedLog.previousHeader].flatMap { UInt64($0) }
                switch chain.admit(message.streamSequence, previous: previous) {
                case .apply: break
                case .alreadyRead, .void:
                    if message.streamSequence >= last { break reading }
                    continue reading
                case .gap: throw Self.missing(after: next - 1, base: base, earliest: earliest)
                }
                if let text = message.headers?[ReplicatedLog.rulesHeader] {
                    guard let sequence = UInt64(text) else { throw .storage("a rules change in the log of \(namespace) names no sequence") }
                    if sequence >= next {
                        guard sequence == next else { throw Self.missing(after: next - 1, base: base, earliest: earliest) }
                        next += 1
                    }
                } else {
                    for record in try Self.decode(message) where record.sequence >= next {
                        guard record.sequence == next else { throw Self.missing(after: next - 1, base: base, earliest: earliest) }
                        if until(record) {
                            await reader.stop()
                            return
                        }
                        body(record)
                        next += 1
                    }
                }
                if message.streamSequence >= last { break reading }
            }
        } catch {
            await reader.stop()
            throw error
        }
        await reader.stop()
        if Task.isCancelled { throw .storage("reading the log of \(namespace) took longer than \(Self.readTimeout)") }
    }

    /// A record missing after `sequence`: from the empty start, the log's beginning was purged
    /// (the instant is out of reach); anywhere else, the history is damaged.
    private static func missing(after sequence: UInt64, base: ClusterHistoryIndex.Base, earliest: Int64?) -> HistoryError {
        base.streamSequence == 0 && sequence == 0 ? .beforeHistory(earliest: nil) : .gap(after: sequence)
    }

    /// The stream sequence of the namespace's last stored message, 0 when none.
    private func lastStreamSequence() async throws(HistoryError) -> UInt64 {
        do {
            return try await node.jetStream.lastMessage(stream: ClusterNode.logStream, subject: subject).sequence
        } catch {
            if error.apiError?.errCode == JetStreamAPIError.noMessageFound { return 0 }
            throw .storage("\(error)")
        }
    }

    /// The records of one stored batch.
    private static func decode(_ message: JetStreamMessage) throws(HistoryError) -> [LogRecord] {
        do {
            let contents = try LogSegmentReader.read(message.payload, file: "\(message.subject) #\(message.streamSequence)", repair: false)
            if let torn = contents.tornTail { throw HistoryError.storage("batch \(message.streamSequence) of \(message.subject): \(torn)") }
            return contents.records
        } catch let error as HistoryError {
            throw error
        } catch {
            throw .storage("\(error)")
        }
    }

    /// The record sequences a stored message takes: its records', or a rules change's one.
    private static func records(in message: JetStreamMessage) throws(HistoryError) -> [UInt64] {
        if let text = message.headers?[ReplicatedLog.rulesHeader] { return UInt64(text).map { [$0] } ?? [] }
        return try decode(message).map(\.sequence)
    }

    /// Runs `work`, giving it up after `readTimeout`.
    private func bounded<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws(HistoryError) -> Value {
        do {
            return try await withThrowingTaskGroup(of: Value?.self) { group in
                group.addTask { try await work() }
                group.addTask {
                    try? await Task.sleep(for: Self.readTimeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else {
                    throw HistoryError.storage("reading the history of \(namespace) took longer than \(Self.readTimeout)")
                }
                return result
            }
        } catch let error as HistoryError {
            throw error
        } catch {
            throw .storage("\(error)")
        }
    }
}
