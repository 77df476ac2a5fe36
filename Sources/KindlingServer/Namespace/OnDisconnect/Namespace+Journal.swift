import KindlingCore
import Logging

/// onDisconnect on one server with a data directory: the changes of each connection's queued
/// writes go to the namespace's `RegistrationJournal`, so a process that dies still makes them
/// when it starts again.
extension Namespace {
    /// Notes what an operation the namespace took changed of `connection`'s queue, if anything
    /// (nothing when its `answer` refused it). The answer is borrowed, not optional: wrapping it
    /// in an optional copied it (a write's holds its node twice) for every request of every block.
    func journal(_ operation: Operation, answer: Answer, of connection: ConnectionID) {
        guard operation.changesRegistrations, let journal = durability.disk?.journal, state.connections[connection] != nil else { return }
        if case .refused = answer { return }
        let auth = state.auth(of: .realtime(connection))
        switch operation {
        case .onDisconnectSet(let path, let data): journal.note(.queued(.set(path: path, data: data, precondition: nil), as: auth), of: connection)
        case .onDisconnectUpdate(let path, let members): journal.note(.queued(.update(path: path, members: members), as: auth), of: connection)
        case .onDisconnectCancel(let path): journal.note(.cancelled(path), of: connection)
        case .authenticate: journal.note(.identity(auth), of: connection)
        default: break
        }
    }

    /// Writes the noted changes before the answers that confirm them go out; the whole file
    /// again from the queues when it is new, has grown stale or a write failed (at the next
    /// change, so a full disk costs no rewrite per block of plain writes).
    func flushJournal() {
        guard let journal = durability.disk?.journal, journal.hasPending else { return }
        do {
            if journal.wantsRewrite {
                try journal.rewrite(queuedRegistrations())
            } else {
                try journal.flush()
            }
        } catch {
            logger.error("could not keep onDisconnect registrations on disk; a crash would lose them: \(error)")
        }
    }

    /// Each open connection's identity and queued writes, for a journal written from scratch.
    private func queuedRegistrations() -> [(connection: ConnectionID, auth: AuthState, writes: [Operation])] {
        state.connections.keys.compactMap { connection in
            let (auth, writes) = state.onDisconnectWrites(of: connection)
            return writes.isEmpty ? nil : (connection, auth, writes)
        }
    }

    /// The journal of a namespace that has just got its directory, with what its open
    /// connections have queued so far noted (written at the next `flushJournal`).
    func startJournal(directory: String) -> RegistrationJournal {
        let journal = RegistrationJournal(directory: directory)
        for (connection, auth, writes) in queuedRegistrations() {
            for write in writes { journal.note(.queued(write, as: auth), of: connection) }
        }
        return journal
    }

    /// At start, before the namespace's own journal begins: the registrations the connections
    /// of a process that died left in `directory`.
    func takeLeftRegistrations(directory: String) -> [StoredRegistrations] {
        do {
            let taken = try RegistrationJournal.takeOver(directory: directory)
            if taken.unreadable > 0 {
                logger.error(
                    "skipped onDisconnect registrations a stopped server left that do not read", metadata: ["changes": "\(taken.unreadable)"])
            }
            return taken.left
        } catch {
            logger.error("could not read the onDisconnect registrations a stopped server left: \(error)")
            return []
        }
    }

    /// Makes the onDisconnect writes the connections of a process that died `left`, as writes of
    /// the identities that queued them.
    func makeLeftRegistrations(_ left: [StoredRegistrations]) {
        guard !left.isEmpty else { return }
        let writes = left.flatMap(\.writes)
        makeGoneConnectionsWrites(writes, run: .crash, metadata: [:])
        logger.notice(
            "made the onDisconnect writes of connections a stopped server had",
            metadata: ["connections": "\(left.count)", "writes": "\(writes.count)"])
    }

    /// A connection ended and its writes were made (or handed on): none are left to keep.
    func journalEnded(_ connection: ConnectionID) {
        durability.disk?.journal.note(.ended, of: connection)
        flushJournal()
    }
}
