import KindlingCore
import KindlingProtocol
import NIOCore

/// Realtime connectors to every node of a cluster for one namespace: connection `i` goes to node
/// `i mod n`, so one run spreads its load over 1, 2 or 3 nodes. The first node is where the
/// scenarios put their writer, and with one node this is exactly a `RealtimeConnector`.
public struct RoundRobinConnector: Sendable {
    /// One connector per node, in the order the nodes were given.
    public let nodes: [RealtimeConnector]

    /// Connectors to `targets` (at least one), all for `namespace`.
    public init(targets: [BenchTarget], group: any EventLoopGroup, namespace: String) throws(BenchError) {
        guard !targets.isEmpty else { throw BenchError.invalidArgument("no server to connect to") }
        nodes = targets.map { RealtimeConnector(target: $0, group: group, namespace: namespace) }
    }

    /// The first node's connector: the writer's node.
    public var first: RealtimeConnector { nodes[0] }

    /// The connector of connection number `index` (0-based).
    public func node(for index: Int) -> RealtimeConnector { nodes[index % nodes.count] }

    /// Opens one connection to the first node and reads `path` through it, then keeps it open.
    ///
    /// A cluster node opens a namespace at its first connection and takes the namespace's lease
    /// if it is free; the read is answered only once the node has read the namespace's log. So
    /// the first node leads when the scenario's other connections arrive, and the scenario's
    /// writes are the leader's own rather than forwarded ones (when the namespace is new). A
    /// single node needs none of this, so there it opens nothing.
    public func primeFirstNode(reading path: Path) async throws -> RealtimeLink? {
        guard nodes.count > 1 else { return nil }
        let link = try await first.connect { _ in IdleBehaviour() }
        do {
            _ = try await link.callOK(.get(path: path, query: .all))
        } catch {
            await link.close()
            throw error
        }
        return link
    }
}
