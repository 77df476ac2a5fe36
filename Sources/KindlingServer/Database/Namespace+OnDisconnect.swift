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
    /// they run at most once. Confined to `queue`.
    func closeRegistrations(_ writes: ArraySlice<ForwardedWrite>, node: ClusterNode, connection: ConnectionID) {
        guard storedRegistrations.remove(connection) != nil else { return forwardOnDisconnect(writes, node: node, connection: connection) }
        let key = node.registrationKey(name, connection)
        storeRegistrations { [logger] in
            let revision = self.registrationRevisions.withLock { $0.removeValue(forKey: connection) }
            do throws(JetStreamError) {
                try await node.registrations.delete(key, revision: revision)
            } catch {
                guard !error.isWrongLastSequence else {
                    return logger.notice("onDisconnect writes already made by the leader", metadata: ["connection": "\(connection)"])
                }
                logger.warning("could not take onDisconnect registrations out of NATS: \(error)", metadata: ["connection": "\(connection)"])
            }
            self.queue.async { self.forwardOnDisconnect(writes, node: node, connection: connection) }
        }
    }

    /// Sends a closed connection's onDisconnect writes to the leader one after the other, each
    /// once the previous one is answered, so they are made in the order they were queued. A
    /// refused one is logged (as on one server) and the next one still goes. Confined to `queue`.
    func forwardOnDisconnect(_ writes: ArraySlice<ForwardedWrite>, node: ClusterNode, connection: ConnectionID) {
        guard let write = writes.first else { return forgetRegistrations(connection) }
        forward(write, node: node) { answer in
            if case .refused(let refusal) = answer {
                self.logger.warning("onDisconnect write was not made: \(refusal.wire.message)", metadata: ["connection": "\(connection)"])
            }
            self.forwardOnDisconnect(writes.dropFirst(), node: node, connection: connection)
        }
    }

    /// Keeps a connection's registrations in `kindling_ondisconnect` (or deletes them when none
    /// are left), so the leader runs them should this node die. Confined to `queue`.
    func persistRegistrations(_ connection: ConnectionID, node: ClusterNode) {
        let (auth, operations) = state.onDisconnectWrites(of: connection)
        let writes = operations.compactMap { ForwardedWrite($0, auth: auth) }
        guard !writes.isEmpty else { return forgetRegistrations(connection) }
        storedRegistrations.insert(connection)
        let key = node.registrationKey(name, connection)
        let value = Array(("[" + writes.map { String(decoding: $0.encoded(), as: UTF8.self) }.joined(separator: ",") + "]").utf8)
        storeRegistrations { [logger] in
            do {
                let revision = try await node.registrations.put(key, value)
                self.registrationRevisions.withLock { $0[connection] = revision }
            } catch {
                self.registrationRevisions.withLock { $0[connection] = nil }
                logger.warning("could not keep onDisconnect registrations in NATS: \(error)", metadata: ["connection": "\(connection)"])
            }
        }
    }

    /// Deletes a connection's registrations from the bucket once they were made (or are gone).
    /// Confined to `queue`.
    func forgetRegistrations(_ connection: ConnectionID) {
        guard let node = cluster, storedRegistrations.remove(connection) != nil else { return }
        let key = node.registrationKey(name, connection)
        storeRegistrations {
            self.registrationRevisions.withLock { $0[connection] = nil }
            try? await node.registrations.delete(key)
        }
    }

    /// Runs `body` after every earlier put or delete of registrations. Confined to `queue`.
    func storeRegistrations(_ body: @escaping @Sendable () async -> Void) {
        let previous = registrationStore
        registrationStore = Task {
            await previous?.value
            await body()
        }
    }

    /// On the leader, every lease time: the registrations of nodes whose `kindling_nodes` key is
    /// gone (they died) are run here. Each key is deleted at the revision read before its
    /// writes run, so of two leaders (one deposed) only one runs them. The delete markers of
    /// keys already done are purged, so the bucket holds only the registrations of open
    /// connections.
    func sweepRegistrations(_ node: ClusterNode) async {
        let stream = "KV_" + ClusterNode.registrationBucket
        let prefix = "$KV.\(ClusterNode.registrationBucket).\(name)."
        guard let info = try? await node.jetStream.streamInfo(stream), info.state.lastSequence > 0,
            let consumer = try? await node.jetStream.orderedConsumer(stream: stream, startSequence: 1, filterSubject: prefix + ">", heartbeat: .seconds(1))
        else { return }
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
        var alive: [String: Bool] = [:]
        for (key, entry) in latest {
            let parts = key.split(separator: ".")
            guard parts.count == 2, parts[0] != node.memberID else { continue }
            let owner = String(parts[0])
            if alive[owner] == nil { alive[owner] = ((try? await node.nodes.get(owner)) ?? nil) != nil }
            guard alive[owner] == false else { continue }
            do {
                try await node.registrations.delete(name + "." + key, revision: entry.revision)
            } catch {
                continue  // changed meanwhile, or another leader took it
            }
            guard case .array(let writes)? = try? JSONParser.parse(entry.value) else { continue }
            let decoded = writes.compactMap { try? ForwardedWrite.decode($0) }
            await onQueue { self.runRegistrations(decoded, of: owner) }
        }
    }

    /// Runs a dead node's registrations as writes of the identities that queued them, if this
    /// node still leads. Confined to `queue`.
    func runRegistrations(_ writes: [ForwardedWrite], of owner: String) {
        guard replicated != nil else { return }
        for write in writes {
            var out: [Outgoing] = []
            if case .refused(let refusal) = state.apply(write.operation, by: .rest(write.auth), now: Namespace.now(), into: &out) {
                logger.warning("onDisconnect write of a dead node was not made: \(refusal.wire.message)", metadata: ["node": "\(owner)"])
            }
            logRefusals()
            finish(out)
        }
        logger.notice("ran the onDisconnect writes of a node that died", metadata: ["node": "\(owner)", "writes": "\(writes.count)"])
    }
}
