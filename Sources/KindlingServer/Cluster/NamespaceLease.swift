import Logging
import NATSClient
import Synchronization

/// A namespace's leader lease in `kindling_leases`: key the namespace, value the holder's node
/// id. It is taken with a create-if-absent (or, when the key still names this node after a
/// restart, an update at its revision), and renewed every third of the lease time with an update
/// by revision. A renewal that fails gives the lease up at once and tells `onLost`: the namespace
/// must then stop taking writes, since another node may take the lease when it expires.
final class NamespaceLease: Sendable {
    let namespace: String
    private let node: ClusterNode
    private let renewer = Mutex<Task<Void, Never>?>(nil)
    /// The revision of the last successful create or renewal.
    private let revision: Mutex<UInt64>

    /// The revision of the last successful create or renewal (names this leadership's term).
    var currentRevision: UInt64 { revision.withLock { $0 } }

    private init(namespace: String, node: ClusterNode, revision: UInt64) {
        self.namespace = namespace
        self.node = node
        self.revision = Mutex(revision)
    }

    /// Takes the lease, or returns nil when another live node holds it.
    static func acquire(_ namespace: String, node: ClusterNode) async throws(JetStreamError) -> NamespaceLease? {
        let me = Array(node.configuration.nodeID.utf8)
        do {
            let revision = try await node.leases.create(namespace, me)
            return NamespaceLease(namespace: namespace, node: node, revision: revision)
        } catch {
            guard error.isWrongLastSequence else { throw error }
        }
        // Held: by this node before a restart (same id), it is still ours to renew.
        guard let entry = try await node.leases.get(namespace), entry.value == me else { return nil }
        do {
            let revision = try await node.leases.update(namespace, me, revision: entry.revision)
            return NamespaceLease(namespace: namespace, node: node, revision: revision)
        } catch {
            guard error.isWrongLastSequence else { throw error }
            return nil
        }
    }

    /// Renews every third of the lease time until `release`, or until a renewal fails, which
    /// calls `onLost` once.
    func keepAlive(onLost: @escaping @Sendable (String) -> Void) {
        let period = node.configuration.leaseTime / 3
        let task = Task { [node, namespace] in
            let me = Array(node.configuration.nodeID.utf8)
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: period)
                } catch {
                    return
                }
                do {
                    let renewed = try await node.leases.update(namespace, me, revision: self.currentRevision)
                    self.revision.withLock { $0 = renewed }
                } catch {
                    if Task.isCancelled { return }
                    onLost("the lease renewal failed: \(error)")
                    return
                }
            }
        }
        renewer.withLock { $0 = task }
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
