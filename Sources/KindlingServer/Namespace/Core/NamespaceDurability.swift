/// Where a namespace keeps its writes: a lifecycle that starts at its first write (a namespace
/// a registry made for a read, a listen or a registration holds nothing yet) and then stays.
enum NamespaceDurability {
    /// No write yet: the first asks the registry for a place under `--max-namespaces`
    /// (`NamespaceLifecycle.reserve`) and claims it.
    case unclaimed
    /// In memory: the server has no data directory, the namespace's log is in NATS (cluster
    /// mode), or no registry made it.
    case memory
    /// On disk, in the namespace's own directory.
    case stored(NamespaceDisk)
    /// Its directory could not be made: every write is refused.
    case failed

    /// True once the namespace holds writes (or was loaded from disk, or has no registry).
    var isClaimed: Bool {
        if case .unclaimed = self { return false }
        return true
    }

    /// True when the namespace's writes go to its files (a test of the case alone, for the hot
    /// path: `disk` copies them out).
    var isStored: Bool {
        if case .stored = self { return true }
        return false
    }

    /// The namespace's files, when it has them.
    var disk: NamespaceDisk? {
        if case .stored(let disk) = self { return disk }
        return nil
    }
}

/// A namespace's files: its log and snapshots, its own rules, and its connections' queued
/// onDisconnect writes (`RegistrationJournal`). A class, so reading the durability on every
/// block takes one reference, not a copy of each part. Isolated to its namespace, which alone
/// holds it.
final class NamespaceDisk {
    let storage: NamespaceStorage
    let rulesFile: NamespaceRulesFile
    let journal: RegistrationJournal
    /// The sequence the newest snapshot covers (or is being written for).
    var snapshotSequence: UInt64

    init(storage: NamespaceStorage, rulesFile: NamespaceRulesFile, journal: RegistrationJournal, snapshotSequence: UInt64) {
        self.storage = storage
        self.rulesFile = rulesFile
        self.journal = journal
        self.snapshotSequence = snapshotSequence
    }
}
