import KindlingCore
import Logging

/// onDisconnect on one server with a data directory: each connection's queued writes are kept
/// in the namespace's `RegistrationJournal`, so a process that dies still makes them when it
/// starts again. Confined to `queue`, like the rest of `Namespace`.
extension Namespace {
    /// Records what `connection` has queued now, before the client hears `ok`.
    func journalRegistrations(of connection: ConnectionID) {
        guard let journal = registrationJournal else { return }
        let (auth, operations) = state.onDisconnectWrites(of: connection)
        let value = StoredRegistrations(writes: operations.compactMap { ForwardedWrite($0, auth: auth) }).encoded()
        do {
            try journal.record(connection, value)
        } catch {
            logger.error("could not keep onDisconnect registrations on disk; a crash would lose them: \(error)", metadata: ["connection": "\(connection)"])
        }
    }

    /// Starts the journal of a namespace that has just got its directory, with what its open
    /// connections have queued so far.
    func startJournal(directory: String) {
        registrationJournal = RegistrationJournal(directory: directory)
        for connection in state.connections.keys { journalRegistrations(of: connection) }
    }

    /// At start: makes the onDisconnect writes the connections of a process that died left in
    /// `directory`, as writes of the identities that queued them, then keeps its own journal.
    func makeLeftRegistrations(directory: String) {
        let left: [StoredRegistrations]
        do {
            left = try RegistrationJournal.takeOver(directory: directory)
        } catch {
            logger.error("could not read the onDisconnect registrations a stopped server left: \(error)")
            left = []
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
}
