import Logging
import NATSClient
import Synchronization

/// A namespace's leader lease in `kindling_leases`: key the namespace, value the holder's node
/// id. It is taken with a create-if-absent (or, when the key still names this node after a
/// restart, an update at its revision), and renewed every third of the lease time with an update
/// by revision (`keepAlive`, which says when a failed renewal is retried and when the lease is
/// lost). `onLost` is told once another node holds it: the namespace must then stop taking
/// writes. `isFresh` says whether the leader may still publish.
final class NamespaceLease: Sendable {
    let namespace: String
    private let node: ClusterNode
    private let renewer = Mutex<Task<Void, Never>?>(nil)
    /// The revision of the last successful create or renewal.
    private let revision: Mutex<UInt64>
    /// When the last successful create or renewal was sent: the key cannot expire in NATS
    /// before this plus the lease time.
    private let renewedAt: Mutex<ContinuousClock.Instant>

    /// The revision of the last successful create or renewal (names this leadership's term).
    var currentRevision: UInt64 { revision.withLock { $0 } }

    /// True while the lease is surely this node's: less than a lease time since a create or
    /// renewal that succeeded was sent. Once false, the key may have expired and another node
    /// may lead; a publish the log would still take (that node has not written yet) would then
    /// depose it, so the leader waits for a renewal before publishing (`ReplicatedLog`).
    var isFresh: Bool { ContinuousClock.now - renewedAt.withLock { $0 } < node.configuration.leaseTime }

    private init(namespace: String, node: ClusterNode, revision: UInt64, renewedAt: ContinuousClock.Instant) {
        self.namespace = namespace
        self.node = node
        self.revision = Mutex(revision)
        self.renewedAt = Mutex(renewedAt)
    }

    /// Notes a create or renewal, sent at `sent`, that succeeded with `revision`.
    private func renewed(_ revision: UInt64, sent: ContinuousClock.Instant) {
        self.revision.withLock { $0 = revision }
        renewedAt.withLock { $0 = sent }
    }

    /// Takes the lease, or returns nil when another live node holds it.
    static func acquire(_ namespace: String, node: ClusterNode) async throws(JetStreamError) -> NamespaceLease? {
        let me = Array(node.configuration.nodeID.utf8)
        do {
            let sent = ContinuousClock.now
            let revision = try await node.leases.create(namespace, me)
            return NamespaceLease(namespace: namespace, node: node, revision: revision, renewedAt: sent)
        } catch {
            guard error.isWrongLastSequence else { throw error }
        }
        // Held: by this node before a restart (same id), it is still ours to renew.
        guard let entry = try await node.leases.get(namespace), entry.value == me else { return nil }
        do {
            let sent = ContinuousClock.now
            let revision = try await node.leases.update(namespace, me, revision: entry.revision)
            return NamespaceLease(namespace: namespace, node: node, revision: revision, renewedAt: sent)
        } catch {
            guard error.isWrongLastSequence else { throw error }
            return nil
        }
    }

    /// Renews every third of the lease time until `release`, and calls `onLost` once another
    /// node holds the lease. A renewal that fails for NATS reasons (a server lost, the bucket's
    /// stream electing a leader) is retried without giving up: while the bucket takes no writes,
    /// no other node can take the lease either, and the log's expected sequences fence this node
    /// anyway should another one lead meanwhile. A renewal refused for a message after its
    /// revision, or for an empty key, is checked against the key, as read at that message or
    /// after the renewal's revision (`reread`): still this node's (an earlier renewal that timed
    /// out had gone through), or free again (expired during an outage or a pause of this node,
    /// taken back with a create), it goes on; held by another node, the lease is lost.
    func keepAlive(onLost: @escaping @Sendable (String) -> Void) {
        let leaseTime = node.configuration.leaseTime
        let task = Task { [node, namespace] in
            let me = Array(node.configuration.nodeID.utf8)
            var wait = leaseTime / 3
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: wait)
                } catch {
                    return
                }
                let renewing = self.currentRevision
                do throws(JetStreamError) {
                    let sent = ContinuousClock.now
                    // A refusal that proves nothing (the key expired, or a stale stream leader
                    // answered) is taken after a quarter of the lease time instead of the
                    // JetStream timeout: the key is read through the stream leader below, which
                    // settles it either way, so a leader that slept past its lease with nobody
                    // taking it over leads again soon after it wakes.
                    let renewed = try await node.leases.update(namespace, me, revision: renewing, grace: leaseTime / 4)
                    self.renewed(renewed, sent: sent)
                    wait = leaseTime / 3
                } catch {
                    if Task.isCancelled { return }
                    // Only a refusal naming a message after the renewal's revision says the key
                    // moved on, and one naming no message at all (sequence 0) that it may be
                    // gone: expired while this node was stopped or starved past a lease time, with
                    // nobody taking it since. Retrying that renewal would never succeed, so the
                    // key is read (an entry after the renewal's revision is believed) and created
                    // again if it is gone. Any other failure is retried: no answer, a server lost,
                    // a 10164, or a stale stream leader's refusal from its old store (kept when
                    // the real leader's answer did not come in time).
                    guard let named = error.namedLastSequence, named == 0 || error.provesLaterMessage(after: renewing) else {
                        node.logger.warning("could not renew a lease; retrying", metadata: ["namespace": "\(namespace)", "error": "\(error)"])
                        wait = leaseTime / 20
                        continue
                    }
                    switch await self.reread(after: named == 0 ? renewing + 1 : named, me: me) {
                    case .ours(let revision):
                        // Ours, but since when is not known: renewed at this revision at once.
                        self.revision.withLock { $0 = revision }
                        wait = .zero
                    case .takenBack(let revision, let sent):
                        self.renewed(revision, sent: sent)
                        wait = leaseTime / 3
                    case .held:
                        onLost("another node holds the lease")
                        return
                    case .unknown:
                        wait = leaseTime / 20
                    }
                }
            }
        }
        renewer.withLock { $0 = task }
    }

    /// What the key says after a renewal was refused for a message after its revision.
    private enum Reread {
        /// It names this node (an earlier renewal that timed out had gone through), at `revision`.
        case ours(revision: UInt64)
        /// It had expired or been deleted, and this node created it again, at `revision`, with
        /// the create sent at `sent`.
        case takenBack(revision: UInt64, sent: ContinuousClock.Instant)
        /// It names another node: the lease is lost.
        case held
        /// Not known yet: the read failed, came from a store older than the refusal's message (a
        /// stream leader back from a partition answers from its old store for a moment), or the
        /// create was refused (by another node's create, or by the key a stale read missed).
        case unknown
    }

    /// Reads the key after a renewal was refused for message `later` (for an empty key: the
    /// message after the renewal's revision). Only an entry at `later` or after it is believed:
    /// a stale store can name a holder from before this node's term.
    private func reread(after later: UInt64, me: [UInt8]) async -> Reread {
        do throws(JetStreamError) {
            let entry = try await node.leases.entry(namespace)
            if let entry, entry.revision < later {
                node.logger.info(
                    "a lease read older than the renewal's refusal; reading again",
                    metadata: ["namespace": "\(namespace)", "read": "\(entry.revision)", "refused for": "\(later)"])
                return .unknown
            }
            if let entry, entry.operation == .put {
                return entry.value == me ? .ours(revision: entry.revision) : .held
            }
            let sent = ContinuousClock.now
            return .takenBack(revision: try await node.leases.create(namespace, me), sent: sent)
        } catch {
            return .unknown
        }
    }

    /// Stops renewing and deletes the lease if this node still holds it, so another node can
    /// lead at once (a clean shutdown).
    func release() async {
        renewer.withLock { task in
            task?.cancel()
            task = nil
        }
        let current = revision.withLock { $0 }
        try? await node.leases.delete(namespace, revision: current)
    }

    /// Stops renewing without deleting (the lease was lost).
    func abandon() {
        renewer.withLock { task in
            task?.cancel()
            task = nil
        }
    }
}
