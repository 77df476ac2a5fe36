import KindlingCore
import Logging

/// onDisconnect on one server with a data directory: the changes of each connection's queued
/// writes go to the namespace's `RegistrationJournal`, so a process that dies still makes them
/// when it starts again. Confined to `queue`, like the rest of `Namespace`.
extension Namespace {
    /// Notes what an operation the namespace took changed of `connection`'s queue, if anything:
    /// its identity is noted before its first queued write, and later only while it has any.
    func journal(_ operation: Operation, answer: Answer?, of connection: ConnectionID) {
        guard let journal = registrationJournal, operation.changesRegistrations, state.connections[connection] != nil else { return }
        if case .refused? = answer { return }
        switch operation {
        case .onDisconnectSet(let path, let data):
            if !journal.journaled.contains(connection) { journal.note(.identity(state.auth(of: .realtime(connection))), of: connection) }
            journal.note(.queued(.set(path: path, data: data, precondition: nil)), of: connection)
        case .onDisconnectUpdate(let path, let members):
            if !journal.journaled.contains(connection) { journal.note(.identity(state.auth(of: .realtime(connection))), of: connection) }
            journal.note(.queued(.update(path: path, members: members)), of: connection)
        case .onDisconnectCancel(let path) where journal.journaled.contains(connection):
            journal.note(.cancelled(path), of: connection)
        case .authenticate where journal.journaled.contains(connection):
            journal.note(.identity(state.auth(of: .realtime(connection))), of: connection)
        default:
            break
        }
    }

    /// Writes the noted changes before the answers that confirm them go out; the whole file
    /// again from the queues when it has grown stale or a write failed (at the next change, so
    /// a full disk costs no rewrite per block of plain writes).
    func flushJournal() {
        guard let journal = registrationJournal, journal.hasPending else { return }
        do {
            if journal.wantsRewrite {
                let queued = state.connections.keys.map { connection in
                    let (auth, writes) = state.onDisconnectWrites(of: connection)
                    return (connection, auth, writes)
                }
                try journal.rewrite(queued)
            } else {
                try journal.flush()
            }
        } catch {
            logger.error("could not keep onDisconnect registrations on disk; a crash would lose them: \(error)")
        }
    }

    /// Starts the journal of a namespace that has just got its directory, with what its open
    /// connections have queued so far.
    func startJournal(directory: String) {
        let journal = RegistrationJournal(directory: directory)
        registrationJournal = journal
        for connection in state.connections.keys {
            let (auth, writes) = state.onDisconnectWrites(of: connection)
            guard !writes.isEmpty else { continue }
            journal.note(.identity(auth), of: connection)
            for write in writes { journal.note(.queued(write), of: connection) }
        }
        flushJournal()
    }

    /// At start: makes the onDisconnect writes the connections of a process that died left in
    /// `directory`, as writes of the identities that queued them, then keeps its own journal.
    func makeLeftRegistrations(directory: String) {
        var left: [StoredRegistrations] = []
        do {
            let taken = try RegistrationJournal.takeOver(directory: directory)
            left = taken.left
            if taken.unreadable > 0 { logger.error("skipped onDisconnect registrations a stopped server left that do not read", metadata: ["changes": "\(taken.unreadable)"]) }
        } catch {
            logger.error("could not read the onDisconnect registrations a stopped server left: \(error)")
        }
        startJournal(directory: directory)
        guard !left.isEmpty else { return }
        var out: [Outgoing] = []
        var made = 0
        for registrations in left {
            for write in registrations.writes {
                made += 1
                if case .refused(let refusal) = state.apply(write.operation, by: .rest(write.auth), now: Namespace.now(), into: &out) {
                    logger.warning("an onDisconnect write left by a stopped server was not made: \(refusal.wire.message)")
                }
            }
        }
        logRefusals()
        finish(out)
        logger.notice("made the onDisconnect writes of connections a stopped server had", metadata: ["connections": "\(left.count)", "writes": "\(made)"])
    }

    /// A connection ended and its writes were made (or handed on): none are left to keep.
    func journalEnded(_ connection: ConnectionID) {
        guard let journal = registrationJournal, journal.journaled.contains(connection) else { return }
        journal.note(.ended, of: connection)
        flushJournal()
    }
}
