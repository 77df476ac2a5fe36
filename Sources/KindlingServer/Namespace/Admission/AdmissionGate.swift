/// The one admission every request passes before a namespace's checkpoint
/// (`NamespaceState.apply`), whatever carried it: a realtime connection's request, a REST
/// request, an event stream, a write a follower forwards, an onDisconnect write (at a close,
/// after a crash, after a dead node) and a rules change all ask `admit`, so each is refused,
/// forwarded to the leader or decided here by the same rule.
///
/// A value made for one block of work on the namespace's queue, from what the namespace is then
/// (`Namespace.admissionGate()`): whether it serves at all and its standing in the cluster. Whether
/// writes can be taken (`checkWrites`, given with each request so the gate holds no closure) is
/// asked once, at the first request that needs it: asking may reserve a place under the
/// namespace cap for a first write, which the block settles at its end when `askedWrites`.
struct AdmissionGate {
    /// Where a namespace's writes are decided.
    enum Standing: Sendable, Equatable {
        /// Outside cluster mode: here.
        case standalone
        /// The cluster's leader of the namespace: here, its followers' writes too.
        case leading
        /// A follower of the leader's log: by the leader, which each write is forwarded to.
        case following
        /// Nowhere, for now: a cluster node that is joining, or failed or was deposed and reads
        /// the log again.
        case unsettled
    }

    /// What a request does, as far as admission cares.
    enum Kind: Sendable, Equatable {
        /// Changes no data: reads, listens, identities, event streams, reading rules.
        case read
        /// Changes data, or the rules, now.
        case write
        /// Queues onDisconnect writes, made later.
        case registration
    }

    /// Set when the namespace serves nothing (its cluster log could not be read, or the node is
    /// over its cap of namespaces): every request is refused with it.
    let unserved: Refusal?
    let standing: Standing
    /// The answer of `checkWrites`, once asked.
    private var writes: Refusal??

    init(unserved: Refusal?, standing: Standing) {
        self.unserved = unserved
        self.standing = standing
    }

    /// True once the gate asked whether writes can be taken (so a reservation may need settling).
    var askedWrites: Bool { writes != nil }

    /// What to do with a request of `kind` from `caller`. `forgotten` is true for a realtime
    /// connection the namespace forgot while it was still open (its client came back as a new
    /// session, or a deposed leader dropped its tree): nothing more it sends is taken.
    /// `checkWrites` answers nil when writes can be taken here now, else the refusal (failing
    /// storage, the namespace cap, a leader whose log is not healthy).
    mutating func admit(_ kind: Kind, from caller: Caller, forgotten: Bool = false, checkWrites: () -> Refusal?) -> Admission {
        switch caller {
        case .forwarded:
            // Decided by a leader that can write. (The node that forwarded it is not told of this
            // refusal: see `Namespace.serveForwarded`.)
            guard standing == .leading else { return .refuse(.unavailable(Namespace.notLeading)) }
            if let refusal = writeRefusal(checkWrites) { return .refuse(refusal) }
            return .decide
        case .onDisconnect(.deadNode, _):
            // Only the leader runs a dead node's registrations (they go back to NATS otherwise).
            guard standing == .leading else { return .refuse(.unavailable(Namespace.notLeading)) }
        default:
            if let unserved { return .refuse(unserved) }
            if forgotten { return .refuse(.unavailable(Namespace.notJoined)) }
        }
        switch kind {
        case .read:
            return .decide
        case .write:
            if standing == .following { return .forward }
            if let refusal = writeRefusal(checkWrites) { return .refuse(refusal) }
            return .decide
        case .registration:
            // Refused by the namespace cap only: failing storage refuses the writes when they
            // run, and a follower hands them to the leader then.
            if case .namespaceLimit(let message)? = writeRefusal(checkWrites) { return .refuse(.namespaceLimit(message)) }
            return .decide
        }
    }

    private mutating func writeRefusal(_ checkWrites: () -> Refusal?) -> Refusal? {
        if let writes { return writes }
        let refusal = checkWrites()
        writes = .some(refusal)
        return refusal
    }
}

extension Operation {
    /// What the operation does, as far as admission cares.
    var admission: AdmissionGate.Kind {
        if writesNow { return .write }
        return writesAtDisconnect ? .registration : .read
    }
}
