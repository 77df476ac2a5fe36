import Foundation
import KindlingCore
import Logging
import Synchronization

/// The namespaces of a server, each created on first use, and their storage.
final class NamespaceRegistry: Sendable {
    private let namespaces = Mutex<[String: Namespace]>([:])
    private let logger: Logger
    private let storage: StorageConfiguration?
    private let lock = Mutex<DataDirectoryLock?>(nil)
    /// The rules of namespaces without their own, whether they are open, and `--rules-debug`.
    private let defaultRules: Mutex<(rules: RulesDocument, open: Bool, debug: Bool)>
    private let limits: ConnectionLimits

    init(logger: Logger, storage: StorageConfiguration?, rules: (rules: RulesDocument, open: Bool), rulesDebug: Bool = false, limits: ConnectionLimits = ConnectionLimits()) {
        self.logger = logger
        self.storage = storage
        self.defaultRules = Mutex((rules.rules, rules.open, rulesDebug))
        self.limits = limits
    }

    /// A new namespace under the server's rules.
    private func makeNamespace(_ name: String, root: Node = .empty) -> Namespace {
        let rules = defaultRules.withLock { $0 }
        return Namespace(name: name, logger: logger, root: root, rules: rules.rules, rulesAreOpen: rules.open, rulesDebug: rules.debug, limits: limits)
    }

    /// Puts new server rules in force in every namespace without rules of its own (a reloaded
    /// `--rules` file).
    func setDefaultRules(_ rules: RulesDocument, open: Bool) {
        let debug = defaultRules.withLock { current in
            current = (rules, open, current.debug)
            return current.debug
        }
        for namespace in namespaces.withLock({ Array($0.values) }) { namespace.useDefaultRules(rules, open: open, debug: debug) }
    }

    /// Loads every namespace found in the data directory, logging what it loaded and how long
    /// it took. Damage that recovery will not cut without `--repair` stops the start.
    func recoverAll() throws {
        guard let storage else { return }
        try StorageLayout.createDirectory(storage.directory)
        let held = try DataDirectoryLock(directory: storage.directory, server: true)
        lock.withLock { $0 = held }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: storage.directory)) ?? []
        for directoryName in names.sorted() {
            let directory = storage.directory + "/" + directoryName
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
                let name = StorageLayout.namespace(fromDirectoryName: directoryName)
            else { continue }
            let started = ContinuousClock.now
            let recovered = try NamespaceStorage.recover(directory: directory, repair: storage.repair, logger: logger)
            let namespace = makeNamespace(name, root: recovered.root)
            try namespace.attachStorage(
                directory: directory, configuration: storage, lastSequence: recovered.lastSequence,
                snapshotSequence: recovered.snapshotSequence
            )
            namespaces.withLock { $0[name] = namespace }
            logger.notice(
                "loaded namespace",
                metadata: [
                    "namespace": "\(name)", "snapshot-bytes": "\(recovered.snapshotBytes)",
                    "snapshot-sequence": "\(recovered.snapshotSequence)", "replayed-records": "\(recovered.replayedRecords)",
                    "last-sequence": "\(recovered.lastSequence)", "duration": "\(ContinuousClock.now - started)",
                ]
            )
        }
    }

    /// The namespace called `name`, created if new.
    func namespace(_ name: String) -> Namespace {
        namespaces.withLock { all in
            if let existing = all[name] { return existing }
            let created = makeNamespace(name)
            if let storage {
                let directory = StorageLayout.directory(dataDirectory: storage.directory, namespace: name)
                do {
                    try created.attachStorage(directory: directory, configuration: storage, lastSequence: 0, snapshotSequence: 0)
                } catch {
                    logger.critical("cannot store namespace \(name); its writes are refused: \(error)")
                    created.refuseWrites()
                }
            }
            all[name] = created
            logger.info("created namespace", metadata: ["namespace": "\(name)"])
            return created
        }
    }

    /// Starts a snapshot of every namespace with writes its newest snapshot lacks; returns the
    /// names of those namespaces.
    func snapshotAll() -> [String] {
        namespaces.withLock { $0 }.sorted { $0.key < $1.key }.filter { $0.value.snapshotNow() }.map(\.key)
    }

    /// The names of the namespaces in use, sorted.
    var names: [String] { namespaces.withLock { Array($0.keys) }.sorted() }

    /// Waits until every namespace's writes and snapshots are on disk, then lets go of the data
    /// directory.
    func drain() {
        for namespace in namespaces.withLock({ Array($0.values) }) { namespace.drainStorage() }
        lock.withLock { held in
            held?.release()
            held = nil
        }
    }
}
