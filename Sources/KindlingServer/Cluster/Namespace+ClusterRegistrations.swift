import Dispatch
import KindlingCore
import KindlingProtocol
import Logging
import NATSClient
import Synchronization

/// onDisconnect in cluster mode (docs/cluster.md): a connection's registrations are kept in the
/// `kindling_ondisconnect` bucket under this node's id, a follower hands them to the leader when
/// the connection closes, and the leader runs those of nodes that died. Runs on the
/// namespace's queue like the rest of `Namespace`.
extension Namespace {

    /// A follower's connection closed: takes its registrations out of the bucket at the revision
    /// of this node's last put, then makes them. A leader that ran them already (this node's
    /// liveness key lapsed while NATS was out of its reach) deleted the key, so the delete
    /// fails and they are not made twice. A crash between the delete and the writes loses them:
    /// they run at most once.
    ///
    /// The delete has a message id of its own: a refusal naming no later change is tried again
    /// (`retrying`; a stream leader back from a partition refuses from its old store while the
    /// real one stores the delete), and a refusal whose later change is this delete's own first
    /// try still makes the writes.
    func closeRegistrations(_ writes: ArraySlice<ForwardedWrite>, node: ClusterNode, connection: ConnectionID) {
        guard storedRegistrations.remove(connection) != nil else { return forwardOnDisconnect(writes, node: node, connection: connection) }
        let key = node.registrationKey(name, connection)
        let deletion = NATSClient.randomToken()
        storeRegistrations { [logger] in
            let revision = self.registrationRevisions.withLock { $0.removeValue(forKey: connection) }
            do throws(JetStreamError) {
                try await Namespace.retrying(expecting: revision) { () throws(JetStreamError) in
                    try await node.registrations.delete(key, revision: revision, messageID: deletion)
                }
            } catch {
                if error.isWrongLastSequence {
                    // A change after this node's last put: the leader's delete (it made them), or
                    // this delete's own first try, stored though its answer was lost or refused.
                    guard (try? await node.registrations.lastChange(of: key, isMessage: deletion)) == true else {
                        return logger.notice("onDisconnect writes already made by the leader", metadata: ["connection": "\(connection)"])
                    }
                } else {
                    logger.warning(
                        "could not take onDisconnect registrations out of NATS; making them anyway: \(error)",
                        metadata: ["connection": "\(connection)"])
                }
            }
            self.run { namespace in namespace.forwardOnDisconnect(writes, node: node, connection: connection) }
        }
    }

    /// Sends a closed connection's onDisconnect writes to the leader one after the other, each
    /// once the previous one is answered, so they are made in the order they were queued. A
    /// write refused for want of a leader (an election) is sent again a little later, up to
    /// `onDisconnectAttempts` times; one refused otherwise is logged (as on one server) and the
    /// next one still goes.
    func forwardOnDisconnect(_ writes: ArraySlice<ForwardedWrite>, node: ClusterNode, connection: ConnectionID, attempt: Int = 1) {
        guard let write = writes.first else { return forgetRegistrations(connection) }
        forward(write, node: node) { answer in
            if case .refused(.unavailable) = answer, attempt < Namespace.onDisconnectAttempts {
                Task {
                    try? await Task.sleep(for: node.configuration.leaseTime / 2)
                    self.run { namespace in namespace.forwardOnDisconnect(writes, node: node, connection: connection, attempt: attempt + 1) }
                }
                return
            }
            if case .refused(let refusal) = answer {
                self.logger.warning("onDisconnect write was not made: \(refusal.wire.message)", metadata: ["connection": "\(connection)"])
            }
            self.run { $0.forwardOnDisconnect(writes.dropFirst(), node: node, connection: connection) }
        }
    }

    /// Times a closed connection's onDisconnect write is sent while no leader answers.
    static let onDisconnectAttempts = 8

    /// Keeps a connection's registrations in `kindling_ondisconnect` (or deletes them when none
    /// are left), so the leader runs them should this node die; also when the identity they run
    /// as changed.
    func persistRegistrations(_ connection: ConnectionID, node: ClusterNode) {
        let (auth, operations) = state.onDisconnectWrites(of: connection)
        guard let value = StoredRegistrations(writes: operations.compactMap { ForwardedWrite($0, auth: auth, origin: .onDisconnect) }).encoded()
        else {
            return forgetRegistrations(connection)
        }
        storedRegistrations.insert(connection)
        let key = node.registrationKey(name, connection)
        storeRegistrations { [logger] in
            do throws(JetStreamError) {
                let revision = try await Namespace.retrying { () throws(JetStreamError) in try await node.registrations.put(key, value) }
                self.registrationRevisions.withLock { $0[connection] = revision }
            } catch {
                self.registrationRevisions.withLock { $0[connection] = nil }
                logger.warning("could not keep onDisconnect registrations in NATS: \(error)", metadata: ["connection": "\(connection)"])
            }
        }
    }

    /// Deletes a connection's registrations from the bucket once they were made (or are gone).
    func forgetRegistrations(_ connection: ConnectionID) {
        guard let node = cluster, storedRegistrations.remove(connection) != nil else { return }
        let key = node.registrationKey(name, connection)
        storeRegistrations { [logger] in
            self.registrationRevisions.withLock { $0[connection] = nil }
            do throws(JetStreamError) {
                try await Namespace.retrying { () throws(JetStreamError) in try await node.registrations.delete(key) }
            } catch {
                // Left in the bucket, they would run again when this process ends.
                logger.error("could not delete onDisconnect registrations that were made: \(error)", metadata: ["connection": "\(connection)"])
            }
        }
    }

    /// Runs a key-value call up to three times while NATS fails, not when a revision is refused:
    /// that is an answer. For a call that expects `revision`, only a refusal naming a later one
    /// is (`JetStreamError.provesLaterMessage`); another is tried again like a failure.
    static func retrying<T>(expecting revision: UInt64? = nil, _ body: () async throws(JetStreamError) -> T) async throws(JetStreamError) -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch {
                let answered = error.isWrongLastSequence && (revision.map { error.provesLaterMessage(after: $0) } ?? true)
                guard attempt < 3, !answered else { throw error }
                attempt += 1
                try? await Task.sleep(for: .milliseconds(200 * attempt))
            }
        }
    }

    /// After a rejoin closed its connections: their registrations, taken out of the dropped
    /// state, are made once the namespace has read its log again.
    func orphanRegistrations(of connection: ConnectionID) {
        let (auth, operations) = state.disconnectForForwarding(connection)
        let writes = operations.compactMap { ForwardedWrite($0, auth: auth, origin: .onDisconnect) }
        let stored = storedRegistrations.remove(connection) != nil
        guard stored || !writes.isEmpty else { return }
        orphanedRegistrations.append((connection, writes, stored))
    }

    /// Makes the registrations `orphanRegistrations` kept, once the namespace serves again.
    /// Run while `queue` is suspended, before it resumes.
    func makeOrphanedRegistrations(_ node: ClusterNode) {
        let orphans = orphanedRegistrations
        orphanedRegistrations = []
        guard !orphans.isEmpty else { return }
        run { namespace in
            for (connection, writes, stored) in orphans {
                if stored { namespace.storedRegistrations.insert(connection) }
                namespace.closeRegistrations(writes[...], node: node, connection: connection)
            }
        }
    }

    /// Runs `body` after every earlier put or delete of registrations.
    func storeRegistrations(_ body: @escaping @Sendable () async -> Void) {
        let previous = registrationStore
        registrationStore = Task {
            await previous?.value
            await body()
        }
    }

    /// On the leader, every lease time: the registrations of members whose `kindling_nodes` key
    /// is gone in two sweeps in a row (they died; a key missing once may be a renewal lost to a
    /// NATS election) are run here. Each key is deleted at the revision read before its writes
    /// run, so of two leaders (one deposed) only one runs them; a leader deposed between the
    /// delete and the writes puts them back. The delete markers of keys already done are
    /// purged, so the bucket holds only the registrations of open connections. Returns the
    /// members missing in this sweep.
    func sweepRegistrations(_ node: ClusterNode, suspects: Set<String>) async -> Set<String> {
        let stream = "KV_" + ClusterNode.registrationBucket
        let prefix = "$KV.\(ClusterNode.registrationBucket).\(name)."
        guard let info = try? await node.jetStream.streamInfo(stream), info.state.lastSequence > 0,
            let consumer = try? await node.jetStream.orderedConsumer(
                stream: stream, startSequence: 1, filterSubject: prefix + ">", heartbeat: .seconds(1))
        else { return suspects }
        // No message at all on the namespace's keys: nothing tells the reader it is at the end.
        let stopper = Task {
            try? await Task.sleep(for: .seconds(2))
            await consumer.stop()
        }
        var latest: [String: (revision: UInt64, value: [UInt8])] = [:]
        var markers: [String: UInt64] = [:]
        for await message in consumer {
            let key = String(message.subject.dropFirst(prefix.count))
            if message.headers?["KV-Operation"] == nil {
                latest[key] = (message.streamSequence, message.payload)
                markers[key] = nil
            } else {
                latest[key] = nil
                markers[key] = message.streamSequence
            }
            if message.pending == 0 { break }
        }
        stopper.cancel()
        await consumer.stop()
        for (key, marker) in markers {
            // Up to the marker only: a later put of the key (none is expected) stays.
            try? await node.jetStream.purgeStream(stream, subject: prefix + key, before: marker + 1)
        }
        var missing: Set<String> = []
        var present: Set<String> = []
        for (key, entry) in latest {
            let parts = key.split(separator: ".")
            guard parts.count == 2, parts[0] != node.memberID else { continue }
            let owner = String(parts[0])
            if !missing.contains(owner), !present.contains(owner) {
                // A failed lookup is no evidence of death: the member counts as present.
                var found = true
                do {
                    found = try await node.nodes.get(owner) != nil
                } catch {
                    logger.info("could not look up a member's liveness key", metadata: ["node": "\(owner)", "error": "\(error)"])
                }
                if found { present.insert(owner) } else { missing.insert(owner) }
            }
            guard missing.contains(owner), suspects.contains(owner) else { continue }
            guard !Task.isCancelled, await onQueue({ $0.standing == .leading }) else { return missing }
            do {
                try await node.registrations.delete(name + "." + key, revision: entry.revision)
            } catch {
                continue  // changed meanwhile, or another leader took it
            }
            guard let stored = try? StoredRegistrations.decode(entry.value) else {
                logger.error("dropped unreadable onDisconnect registrations", metadata: ["node": "\(owner)"])
                continue
            }
            if await !onQueue({ $0.runRegistrations(stored.writes, of: owner) }) {
                _ = try? await node.registrations.put(name + "." + key, entry.value)
            }
        }
        return missing
    }

    /// Runs a dead node's registrations as writes of the identities that queued them, if this
    /// node still leads (false when it does not: they stay in NATS for the leader).
    func runRegistrations(_ writes: [ForwardedWrite], of owner: String) -> Bool {
        guard standing == .leading else { return false }
        makeGoneConnectionsWrites(writes, run: .deadNode, metadata: ["node": "\(owner)"])
        logger.notice("ran the onDisconnect writes of a node that died", metadata: ["node": "\(owner)", "writes": "\(writes.count)"])
        return true
    }

    /// Makes the onDisconnect writes of connections that are gone with their node or process
    /// (`run` says which), each as a write of the identity that queued it, through the
    /// namespace's admission and checkpoint, counted as onDisconnect writes, and each its own
    /// log batch (a cluster batch is one NATS message); a refused one is logged.
    func makeGoneConnectionsWrites(_ writes: [ForwardedWrite], run: Caller.OnDisconnectRun, metadata: Logger.Metadata) {
        for write in writes {
            serve(write.operation, by: .onDisconnect(run, write.auth)) { [logger] answer in
                guard case .refused(let refusal) = answer else { return }
                logger.warning("an onDisconnect write of a gone connection was not made: \(refusal.wire.message)", metadata: metadata)
            }
        }
    }
}
