/// A node's cached digests, allocated only once the node is hashed: most nodes never are (only
/// listens with a hash and the compound hash read them), and inline, behind a lock, the cache
/// took 32 bytes in every parent's storage.
final class NodeHashBox: Sendable {
    let summary: NodeHashSummary

    init(_ summary: NodeHashSummary) { self.summary = summary }
}
