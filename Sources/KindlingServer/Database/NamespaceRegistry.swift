import Foundation
import KindlingCore
import Logging
import Synchronization

/// The namespaces of a server and their storage.
///
/// A namespace exists once something was written to it (or it was found on disk at start); only
/// then does it have a directory and count against `maxNamespaces`. A read of a namespace that
/// does not exist sees null without any object (`existing`). A connection or stream that
/// listens to one gets a transient namespace (`namespace(_:)`), shared by everyone using that
/// name so a later write reaches them, with no storage; it is forgotten when its last user
/// leaves without having written. The first write claims it (`claim`, on the namespace's own
/// queue, which then creates its directory and files there: never on an event loop, never
/// under this registry's lock).
final class NamespaceRegistry: NamespaceLifecycle {
    private struct Entry {
        let namespace: Namespace
        /// Connections, streams and REST writes using the namespace now.
        var users: Int
        /// Written to, or found on disk: kept for the life of the process.
        var claimed: Bool
    }

    private struct Entries {
        var byName: [String: Entry] = [:]
        var claimed = 0
    }

    private let entries = Mutex(Entries())
    private let logger: Logger
    private let storage: StorageConfiguration?
    private let maxNamespaces: Int
    private let lock = Mutex<DataDirectoryLock?>(nil)
    /// Bounds the namespace logs open at once.
    let openLogs = OpenLogBudget()

    init(logger: Logger, storage: StorageConfiguration?, maxNamespaces: Int = 10_000) {
        self.logger = logger
        self.storage = storage
        self.maxNamespaces = maxNamespaces
    }

    /// Loads every namespace found in the data directory, logging what it loaded and how long
    /// it took. Damage that recovery will not cut without `--repair` stops the start. No log file
    /// stays open: each is opened at its namespace's next write.
    func recoverAll() throws {
        guard let storage else { return }
        try StorageLayout.createDirectory(storage.directory)
        let held = try DataDirectoryLock(directory: storage.directory, server: true)
        lock.withLock { $0 = held }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: storage.directory)) ?? []
        for directoryName in names.sorted() {
            let directory = storage.directory + "/" + directoryName
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            guard let name = StorageLayout.namespace(fromDirectoryName: directoryName), NamespaceName.isValid(name) else {
                logger.warning(
                    "skipped a directory that is not a valid namespace name",
                    metadata: ["directory": "\(ValidationError.quoted(directoryName))", "rule": "\(NamespaceName.rule)"]
                )
                continue
            }
            let started = ContinuousClock.now
            let recovered = try NamespaceStorage.recover(directory: directory, repair: storage.repair, logger: logger)
            let namespace = Namespace(name: name, logger: logger, root: recovered.root, lifecycle: self)
            try namespace.attachStorage(
                directory: directory, configuration: storage, budget: openLogs, lastSequence: recovered.lastSequence,
                snapshotSequence: recovered.snapshotSequence
            )
            entries.withLock { all in
                all.byName[name] = Entry(namespace: namespace, users: 0, claimed: true)
                all.claimed += 1
            }
            logger.notice(
                "loaded namespace",
                metadata: [
                    "namespace": "\(name)", "snapshot-bytes": "\(recovered.snapshotBytes)",
                    "snapshot-sequence": "\(recovered.snapshotSequence)", "replayed-records": "\(recovered.replayedRecords)",
                    "last-sequence": "\(recovered.lastSequence)", "duration": "\(ContinuousClock.now - started)",
                ]
            )
        }
        let count = entries.withLock { $0.claimed }
        if count > maxNamespaces {
            logger.warning("the data directory holds more namespaces than the cap; new ones are refused", metadata: ["namespaces": "\(count)", "cap": "\(maxNamespaces)"])
        }
    }

    /// The namespace called `name` if it exists or is in use; nil when a read would see null.
    func existing(_ name: String) -> Namespace? {
        entries.withLock { $0.byName[name]?.namespace }
    }

    /// The namespace called `name` for one use: a connection or event stream (ended by the
    /// namespace's `detach` or `closeStream`) or a REST write (ended by `write`). A name not in
    /// use gets a transient namespace without storage. The name must be valid (`NamespaceName`).
    func namespace(_ name: String) -> Namespace {
        entries.withLock { all in
            if var entry = all.byName[name] {
                entry.users += 1
                all.byName[name] = entry
                return entry.namespace
            }
            let created = Namespace(name: name, logger: logger, lifecycle: self)
            all.byName[name] = Entry(namespace: created, users: 1, claimed: false)
            return created
        }
    }

    /// One use of `namespace` ended; a transient one that nobody uses any more is forgotten.
    func released(_ namespace: Namespace) {
        entries.withLock { all in
            guard var entry = all.byName[namespace.name], entry.namespace === namespace else { return }
            entry.users -= 1
            if entry.users <= 0, !entry.claimed {
                all.byName[namespace.name] = nil
            } else {
                all.byName[namespace.name] = entry
            }
        }
    }

    /// The first write to `namespace`: counts it against the cap and says where its files go
    /// (nil storage for an in-memory server). Called on the namespace's queue.
    func claim(_ namespace: Namespace) -> NamespaceClaim {
        let granted = entries.withLock { all -> Bool in
            guard var entry = all.byName[namespace.name], entry.namespace === namespace else { return false }
            if entry.claimed { return true }
            guard all.claimed < maxNamespaces else { return false }
            entry.claimed = true
            all.byName[namespace.name] = entry
            all.claimed += 1
            return true
        }
        guard granted else {
            logger.warning("refused a new namespace: the server holds its maximum", metadata: ["cap": "\(maxNamespaces)"])
            return .refused("This server holds its maximum of \(maxNamespaces) namespaces; writes to a new one are refused.")
        }
        logger.info("created namespace", metadata: ["namespace": "\(namespace.name)"])
        guard let storage else { return .inMemory }
        return .stored(
            directory: StorageLayout.directory(dataDirectory: storage.directory, namespace: namespace.name), configuration: storage, budget: openLogs
        )
    }

    /// Starts a snapshot of every namespace with writes its newest snapshot lacks; returns the
    /// names of those namespaces.
    func snapshotAll() -> [String] {
        entries.withLock { $0.byName.mapValues(\.namespace) }.sorted { $0.key < $1.key }.filter { $0.value.snapshotNow() }.map(\.key)
    }

    /// The names of the namespaces that exist or are in use, sorted.
    var names: [String] { entries.withLock { Array($0.byName.keys) }.sorted() }

    /// Waits until every namespace's writes and snapshots are on disk, then lets go of the data
    /// directory.
    func drain() {
        for namespace in entries.withLock({ $0.byName.values.map(\.namespace) }) { namespace.drainStorage() }
        lock.withLock { held in
            held?.release()
            held = nil
        }
    }
}

/// What a namespace may ask of the registry that made it.
protocol NamespaceLifecycle: AnyObject, Sendable {
    /// Its first write: may it have storage, and where?
    func claim(_ namespace: Namespace) -> NamespaceClaim
    /// One use of it ended.
    func released(_ namespace: Namespace)
}

/// The registry's answer to a namespace's first write.
enum NamespaceClaim: Sendable {
    /// Over the cap: the write is refused with this message.
    case refused(String)
    /// Allowed, with nothing to store (an in-memory server).
    case inMemory
    /// Allowed: create the storage in `directory`, its log open within `budget`.
    case stored(directory: String, configuration: StorageConfiguration, budget: OpenLogBudget)
}
