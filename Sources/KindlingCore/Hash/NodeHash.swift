import Crypto
import Synchronization

/// The hash the Firebase SDKs compute over a node, which transactions (`p` with `h`) and listens
/// (`q` with `h`) carry: base64 of SHA-1 over a text form of the node, `""` for the empty node.
///
/// Three variants exist because two SDKs deviate from the canonical rule (exact IEEE bits,
/// children in priority order): the JS SDK rebuilds some doubles' bits arithmetically and gets
/// them wrong, and iOS hashes in key order when every child has a priority. A server that only
/// knew the canonical form would answer `datastale` to those clients for ever, so a compare
/// accepts any of the three.
public enum HashVariant: Sendable, CaseIterable {
    /// Exact IEEE bits, children in priority order (Android, and presumably the hosted server).
    case canonical
    /// Number bits as the JS SDK's `doubleToIEEE754String` computes them.
    case javaScript
    /// Key order for children that all carry a priority, as the iOS SDK hashes.
    case iOS
}

/// What a node's hash cache holds: the canonical digest, and whether the other variants can
/// differ anywhere in the subtree (so comparing a variant costs nothing where they cannot).
struct NodeHashSummary: Sendable {
    var digest: SHA1Digest
    var javaScriptDiffers: Bool
    var iOSDiffers: Bool
}

/// A raw SHA-1 digest.
struct SHA1Digest: Sendable, Equatable {
    var bytes: (UInt64, UInt64, UInt32)

    /// The SHA-1 of `bytes`.
    init(_ bytes: [UInt8]) {
        var hasher = Insecure.SHA1()
        bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        var value: (UInt64, UInt64, UInt32) = (0, 0, 0)
        withUnsafeMutableBytes(of: &value) { target in
            for (index, byte) in hasher.finalize().prefix(20).enumerated() { target[index] = byte }
        }
        self.bytes = value
    }

    static func == (lhs: SHA1Digest, rhs: SHA1Digest) -> Bool {
        lhs.bytes.0 == rhs.bytes.0 && lhs.bytes.1 == rhs.bytes.1 && lhs.bytes.2 == rhs.bytes.2
    }

    /// Appends the 28-character base64 form.
    func appendBase64(to output: inout [UInt8]) {
        var copy = bytes
        withUnsafeBytes(of: &copy) { Base64.append(UnsafeRawBufferPointer(rebasing: $0.prefix(20)), to: &output) }
    }

    var base64: String {
        var output: [UInt8] = []
        appendBase64(to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}

extension Node {
    /// The canonical hash (`""` for the empty node). Cached in the node, so after a write only
    /// the nodes on the written path are hashed again.
    public var hash: String { hash(.canonical) }

    /// The hash as one SDK family computes it.
    public func hash(_ variant: HashVariant) -> String {
        isEmpty ? "" : digest(variant).base64
    }

    /// True when `hash` is this node's hash in any variant: the compare-and-set test for
    /// transactions.
    public func matchesHash(_ hash: String) -> Bool {
        if isEmpty { return hash.isEmpty }
        if hash.isEmpty { return false }
        let summary = hashSummary()
        if summary.digest.base64 == hash { return true }
        if summary.javaScriptDiffers, digest(.javaScript).base64 == hash { return true }
        if summary.iOSDiffers, digest(.iOS).base64 == hash { return true }
        return false
    }

    /// The digests of this (non-empty) node. Shared storage and packed parents cache them; an
    /// inline leaf is hashed on demand, which costs one small SHA-1 and saves a cache in every
    /// leaf.
    func hashSummary() -> NodeHashSummary {
        let storage: NodeStorage
        switch representation {
        case .empty: preconditionFailure("Internal inconsistency: the empty node has no digest")
        case .leaf(let leaf):
            var scratch: [UInt8] = []
            return Node.leafSummary(leaf, priority: nil, scratch: &scratch)
        case .packed(let packed):
            if let cached = packed.cachedHash { return cached }
            let summary = Node.childrenSummary(packed, priority: nil, childrenMayHavePriorities: false)
            packed.cacheHash(summary)
            return summary
        case .shared(let shared): storage = shared
        }
        if let cached = storage.cachedHash { return cached }
        let summary: NodeHashSummary
        switch storage.content {
        case .leaf(let leaf):
            var scratch: [UInt8] = []
            summary = Node.leafSummary(leaf, priority: storage.priority, scratch: &scratch)
        case .children(let map):
            summary = Node.childrenSummary(map, priority: storage.priority, childrenMayHavePriorities: true)
        }
        storage.cacheHash(summary)
        return summary
    }

    /// A parent's digests, from its children's (given in key order). Children that cannot have
    /// priorities (a packed record's) are hashed in that order in one pass; others are first
    /// counted for priorities, which reorder them.
    private static func childrenSummary(
        _ children: some Sequence<(key: Key, node: Node)>,
        priority: Priority?,
        childrenMayHavePriorities: Bool
    ) -> NodeHashSummary {
        var preimage: [UInt8] = []
        var javaScriptDiffers = priority.map { NodeHashText.numberDiffersInJavaScript(Leaf($0)) } ?? false
        var iOSDiffers = false
        NodeHashText.appendPriority(priority, variant: .canonical, to: &preimage)
        var count = 0
        var prioritized = 0
        // Inline leaves have no cache: they are hashed here, through one reused buffer.
        var scratch: [UInt8] = []
        func visit(_ key: Key, _ child: Node) {
            let childSummary: NodeHashSummary
            if case .leaf(let leaf) = child.representation {
                childSummary = Node.leafSummary(leaf, priority: nil, scratch: &scratch)
            } else {
                childSummary = child.hashSummary()
            }
            javaScriptDiffers = javaScriptDiffers || childSummary.javaScriptDiffers
            iOSDiffers = iOSDiffers || childSummary.iOSDiffers
            count += 1
            if child.priority != nil { prioritized += 1 }
            NodeHashText.appendChild(key, childSummary.digest, to: &preimage)
        }
        if childrenMayHavePriorities {
            NodeHashText.forEachChild(of: children, variant: .canonical, visit)
        } else {
            for (key, child) in children { visit(key, child) }
        }
        iOSDiffers = iOSDiffers || (prioritized == count && count > 1)
        return NodeHashSummary(digest: SHA1Digest(preimage), javaScriptDiffers: javaScriptDiffers, iOSDiffers: iOSDiffers)
    }

    /// A leaf's digests, its preimage built in `scratch` (emptied first, its capacity kept).
    private static func leafSummary(_ leaf: Leaf, priority: Priority?, scratch preimage: inout [UInt8]) -> NodeHashSummary {
        preimage.removeAll(keepingCapacity: true)
        NodeHashText.appendLeaf(leaf, priority: priority, variant: .canonical, to: &preimage)
        let javaScriptDiffers =
            NodeHashText.numberDiffersInJavaScript(leaf)
            || priority.map { NodeHashText.numberDiffersInJavaScript(Leaf($0)) } ?? false
        return NodeHashSummary(digest: SHA1Digest(preimage), javaScriptDiffers: javaScriptDiffers, iOSDiffers: false)
    }

    /// The digest in `variant`, reusing the canonical one wherever the variant cannot differ.
    func digest(_ variant: HashVariant) -> SHA1Digest {
        let summary = hashSummary()
        switch variant {
        case .canonical: return summary.digest
        case .javaScript where !summary.javaScriptDiffers: return summary.digest
        case .iOS where !summary.iOSDiffers: return summary.digest
        default: break
        }
        var preimage: [UInt8] = []
        if let leaf {
            NodeHashText.appendLeaf(leaf, priority: priority, variant: variant, to: &preimage)
        } else {
            NodeHashText.appendChildren(children, priority: priority, variant: variant, to: &preimage)
        }
        return SHA1Digest(preimage)
    }
}
