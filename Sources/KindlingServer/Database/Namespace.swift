import Dispatch
import Foundation
import KindlingCore
import KindlingProtocol
import Logging
import NIOCore

/// One namespace's state and the serial queue that owns it.
///
/// Every operation on the namespace is a block on its queue, run to completion before the next:
/// writes are totally ordered, each connection's requests are handled in the order they arrived
/// (a Dispatch queue is FIFO, which an actor's task scheduling does not promise), and no state
/// is shared with the network threads. Outputs are encoded once and handed to each
/// connection's outbound sink, which writes on that connection's event loop.
final class Namespace: @unchecked Sendable {
    let name: String
    private let queue: DispatchQueue
    private let logger: Logger
    // Confined to `queue`.
    private var state: NamespaceState
    private var outbounds: [ConnectionID: SubscriberOutbound] = [:]
    /// The durable log and snapshots; nil for an in-memory namespace. Set once, before use.
    private var storage: NamespaceStorage?
    /// The sequence number of the last write handed to the log.
    private var lastSequence: UInt64 = 0
    /// The sequence the newest snapshot covers (or is being written for).
    private var snapshotSequence: UInt64 = 0
    /// Outputs waiting for the log to make their writes durable, in order: nothing is
    /// acknowledged (or shown to a listener) before the write behind it is durable, and
    /// everything later waits behind it so each connection keeps its order.
    private var held: [(sequence: UInt64, out: [Outgoing], then: (@Sendable () -> Void)?)] = []
    /// The registry that made the namespace: asked at the first write, told when a use ends.
    private weak var lifecycle: (any NamespaceLifecycle)?
    /// True once the namespace may take writes (its first write was allowed, or it was loaded
    /// from disk, or it has no registry); confined to `queue`.
    private var claimed: Bool

    init(name: String, logger: Logger, root: Node = .empty, lifecycle: (any NamespaceLifecycle)? = nil) {
        self.name = name
        self.lifecycle = lifecycle
        self.claimed = lifecycle == nil
        self.queue = DispatchQueue(label: "kindling.namespace.\(name)")
        var logger = logger
        logger[metadataKey: "namespace"] = "\(name)"
        self.logger = logger
        self.state = NamespaceState(name: name, root: root)
    }

    /// Set when storage could not be opened: the namespace then refuses every write.
    private var storageUnavailable = false

    /// Marks the namespace as unable to store anything: writes are refused from now on.
    func refuseWrites() {
        queue.sync { self.storageUnavailable = true }
    }

    /// Nil when writes may be taken now, else why not; confined to `queue`. The first write of
    /// a new namespace claims it from the registry (refused over the namespace cap) and creates
    /// its storage here, on the namespace's own queue.
    private func writeRefusal() -> WriteRefusal? {
        if !claimed, let lifecycle {
            switch lifecycle.claim(self) {
            case .refused(let message):
                return .namespaceLimit(message)
            case .inMemory:
                claimed = true
            case .stored(let directory, let configuration, let budget):
                do {
                    storage = try makeStorage(directory: directory, configuration: configuration, budget: budget, lastSequence: 0)
                    claimed = true
                } catch {
                    logger.error("cannot create the namespace's storage; its writes are refused: \(error)")
                    return .storageFailing
                }
            }
        }
        if storageUnavailable || storage?.log.isHealthy == false { return .storageFailing }
        return nil
    }

    /// Why writes are refused: both are `unavailable` on the wire; REST tells them apart.
    private enum WriteRefusal {
        case storageFailing
        case namespaceLimit(String)

        var message: String {
            switch self {
            case .storageFailing: return Namespace.unwritable
            case .namespaceLimit(let message): return message
            }
        }
    }

    private func makeStorage(
        directory: String, configuration: StorageConfiguration, budget: OpenLogBudget?, lastSequence: UInt64
    ) throws -> NamespaceStorage {
        try NamespaceStorage(
            directory: directory,
            configuration: configuration,
            startSequence: lastSequence + 1,
            budget: budget,
            logger: logger,
            onDurable: { [weak self] sequence in self?.durable(through: sequence) }
        )
    }

    /// Makes the namespace durable: writes from now on are logged after `lastSequence`; the
    /// newest snapshot on disk covers the writes through `snapshotSequence`.
    func attachStorage(
        directory: String, configuration: StorageConfiguration, budget: OpenLogBudget? = nil, lastSequence: UInt64, snapshotSequence: UInt64
    ) throws {
        let storage = try makeStorage(directory: directory, configuration: configuration, budget: budget, lastSequence: lastSequence)
        queue.sync {
            self.storage = storage
            self.claimed = true
            self.lastSequence = lastSequence
            self.snapshotSequence = snapshotSequence
        }
    }

    /// Starts a snapshot now (an operator's request), unless the newest one already covers every
    /// write. Returns whether one was started.
    func snapshotNow() -> Bool {
        queue.sync {
            guard let storage, lastSequence > snapshotSequence else { return false }
            startSnapshot(storage)
            return true
        }
    }

    /// Snapshots the tree as of the last logged write; confined to `queue`.
    private func startSnapshot(_ storage: NamespaceStorage) {
        snapshotSequence = lastSequence
        storage.snapshot(state.database.tree.root, sequence: lastSequence)
    }

    /// Waits until every write so far is durable and every snapshot written (for shutdown).
    func drainStorage() {
        let storage = queue.sync { self.storage }
        storage?.drain()
        queue.sync {}
    }

    /// Registers a connection and where its messages go.
    func attach(_ connection: ConnectionID, outbound: ConnectionOutbound) {
        queue.async {
            self.state.connect(connection)
            self.outbounds[connection] = .webSocket(outbound)
        }
    }

    /// Handles a connection's inputs, in order, as one block.
    func submit(_ connection: ConnectionID, _ inputs: [SessionInput]) {
        queue.async {
            var out: [Outgoing] = []
            // A refusal (storage failing, or a request that could not be read) changes nothing,
            // so it need not wait behind writes held for the disk.
            var refusals: [Outgoing] = []
            let now = Namespace.now()
            // Asked at the first write only: a connection that only reads claims nothing.
            var refusal: WriteRefusal??
            for input in inputs {
                switch input {
                case .request(let request):
                    if request.action.writesNow {
                        if refusal == nil { refusal = self.writeRefusal() }
                        if case let refused?? = refusal {
                            if let number = request.number {
                                refusals.append(Outgoing(recipients: [connection], message: ServerMessage.failure(number, status: .unavailable, message: refused.message)))
                            }
                            continue
                        }
                    }
                    self.state.handle(request, from: connection, now: now, into: &out)
                case .reject(let number, let status, let message):
                    refusals.append(Outgoing(recipients: [connection], message: ServerMessage.failure(number, status: status, message: message)))
                }
            }
            self.dispatch(refusals)
            self.finish(out)
        }
    }

    static let unwritable = "Writes to storage are failing (is the disk full?); nothing was written."

    /// Logs the writes this block committed and sends `out` (then runs `then`) once they are
    /// durable, after anything still held.
    private func finish(_ out: [Outgoing], then: (@Sendable () -> Void)? = nil) {
        let writes = state.takeJournal()
        // onDisconnect writes commit without a request: the namespace is claimed now.
        if !writes.isEmpty, !claimed, let refused = writeRefusal() {
            logger.error("writes could not be stored: \(refused.message)")
        }
        guard let storage else {
            dispatch(out)
            then?()
            return
        }
        if !writes.isEmpty {
            let records = writes.map { write -> LogRecord in
                lastSequence += 1
                return LogRecord(sequence: lastSequence, write: write)
            }
            storage.log.append(records)
        }
        if writes.isEmpty && held.isEmpty {
            dispatch(out)
            then?()
        } else {
            held.append((lastSequence, out, then))
        }
        if !writes.isEmpty, storage.wantsSnapshot { startSnapshot(storage) }
    }

    /// Called by the log: everything through `sequence` is durable; release what waited for it.
    private func durable(through sequence: UInt64) {
        queue.async {
            // Everything one sync released goes out as one dispatch: one task per event loop
            // rather than one per held write.
            var released = 0
            var out: [Outgoing] = []
            var then: [@Sendable () -> Void] = []
            while released < self.held.count, self.held[released].sequence <= sequence {
                out.append(contentsOf: self.held[released].out)
                if let next = self.held[released].then { then.append(next) }
                released += 1
            }
            self.held.removeFirst(released)
            self.dispatch(out)
            for next in then { next() }
        }
    }

    /// Forgets a connection that ended, running its onDisconnect writes.
    func detach(_ connection: ConnectionID) {
        queue.async {
            self.outbounds[connection] = nil
            var out: [Outgoing] = []
            for problem in self.state.disconnect(connection, now: Namespace.now(), into: &out) {
                self.logger.warning("\(problem)", metadata: ["connection": "\(connection)"])
            }
            self.finish(out)
            self.lifecycle?.released(self)
        }
    }


    /// Answers a REST read with the data now at `path` (or the query's window).
    func read(_ path: Path, query: Query, promise: EventLoopPromise<Node>) {
        queue.async {
            promise.succeed(self.state.restRead(path, query: query))
        }
    }

    /// Runs a REST write. Its changes are handed to the listeners' sinks before the promise is
    /// completed, so a client that waits for the HTTP response finds the event already on its way.
    /// Ends one use of the namespace (see `NamespaceRegistry.namespace`).
    func write(_ request: RESTWrite, promise: EventLoopPromise<RESTWriteOutcome>) {
        queue.async {
            defer { self.lifecycle?.released(self) }
            if let refused = self.writeRefusal() {
                switch refused {
                case .storageFailing: promise.succeed(.unavailable(refused.message))
                case .namespaceLimit(let message): promise.succeed(.namespaceLimit(message))
                }
                return
            }
            var out: [Outgoing] = []
            let outcome = self.state.restWrite(request, now: Namespace.now(), into: &out)
            self.finish(out) { promise.succeed(outcome) }
        }
    }

    /// Registers an event stream; its first event (the whole location) goes out at once.
    func openStream(_ stream: ConnectionID, at path: Path, query: Query, outbound: EventStreamOutbound) {
        queue.async {
            self.outbounds[stream] = .eventStream(outbound)
            self.finish(self.state.openStream(stream, at: path, query: query))
        }
    }

    /// Forgets an event stream that ended.
    func closeStream(_ stream: ConnectionID) {
        queue.async {
            self.outbounds[stream] = nil
            self.state.closeStream(stream)
            self.lifecycle?.released(self)
        }
    }

    /// Sends each output to each of its recipients: for realtime connections its bytes split
    /// into frames once and handed to each event loop's outbox in one batch, for event streams
    /// the bytes as they are (one buffer shared by all). A connection's messages stay in order.
    private func dispatch(_ out: [Outgoing]) {
        guard !out.isEmpty else { return }
        var loops = LoopBatches()
        if out.count == 1 {
            // The common case, one message (a write fanned out): no per-connection merging.
            let outgoing = out[0]
            let frames = TextFrame.frames(outgoing.message)
            var chunk: ByteBuffer?
            for recipient in outgoing.recipients {
                switch outbounds[recipient] {
                case .webSocket(let outbound)?:
                    loops.add(outbound, frames)
                case .eventStream(let outbound)?:
                    if chunk == nil { chunk = ByteBuffer(bytes: outgoing.message) }
                    outbound.send([chunk!])
                case nil:
                    break
                }
            }
            loops.deliver()
            return
        }
        var perConnection: [ConnectionID: [ByteBuffer]] = [:]
        var order: [ConnectionID] = []
        for outgoing in out {
            var frames: [ByteBuffer]?
            var chunk: ByteBuffer?
            for recipient in outgoing.recipients {
                let buffers: [ByteBuffer]
                switch outbounds[recipient] {
                case .webSocket?:
                    if frames == nil { frames = TextFrame.frames(outgoing.message) }
                    buffers = frames!
                case .eventStream?:
                    if chunk == nil { chunk = ByteBuffer(bytes: outgoing.message) }
                    buffers = [chunk!]
                case nil:
                    continue
                }
                if perConnection[recipient] == nil { order.append(recipient) }
                perConnection[recipient, default: []].append(contentsOf: buffers)
            }
        }
        for connection in order {
            switch outbounds[connection] {
            case .webSocket(let outbound)?: loops.add(outbound, perConnection[connection]!)
            case .eventStream(let outbound)?: outbound.send(perConnection[connection]!)
            case nil: break
            }
        }
        loops.deliver()
    }

    /// Milliseconds since the Unix epoch.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// What a connection hands its namespace: a request, or the refusal of one it could not read
/// (answered in order with the others).
enum SessionInput: Sendable {
    case request(Request)
    case reject(number: Int, status: WireStatus, message: String)
}
