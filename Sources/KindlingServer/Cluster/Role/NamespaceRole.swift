/// What a namespace is to its cluster, each case carrying what only it has, so no state of one
/// role is left set in another and nothing is worked out from flags.
///
/// `Leadership` (the replicated log, its lease, the server of forwarded writes, the snapshot
/// marks: `Leadership` in the shell) and `Reader` (the task that reads the log) are the
/// shell's; generic here so the transitions (`handle`) are tested without NATS. The shell,
/// `Namespace`, keeps one role, on its queue, and carries out the actions a transition returns.
enum NamespaceRole<Leadership: LeadershipTerm, Reader> {
    /// Outside cluster mode: the namespace decides its writes and keeps them on this node.
    case standalone
    /// Serves nothing and refuses every request with `refusal`: a node over its cap of
    /// namespaces (for good), or one whose log could not be read, until `retry` (the reader
    /// that failed, waiting) tries again.
    case unserved(Refusal, retry: Reader?)
    /// Reading the namespace's log (its snapshot, then its batches) by `reader`, the queue held
    /// meanwhile; it then leads or follows.
    case joining(Reader)
    /// Following the leader's log by `reader` (nil once it stopped), forwarding writes to the
    /// leader; `takingOver` while it tries to take the lease, free since its holder died.
    case following(reader: Reader?, takingOver: Bool)
    /// Leading: writes go to the replicated log under the lease.
    case leading(Leadership)

    /// Where writes are decided now, for the namespace's admission.
    var standing: AdmissionGate.Standing {
        switch self {
        case .standalone: .standalone
        case .leading: .leading
        case .following: .following
        case .joining, .unserved: .unsettled
        }
    }

    /// The leadership, when leading.
    var leadership: Leadership? {
        if case .leading(let leadership) = self { return leadership }
        return nil
    }

    /// Changes the leadership's own state (its snapshot marks), when leading.
    mutating func updateLeadership(_ body: (inout Leadership) -> Void) {
        guard case .leading(var leadership) = self else { return }
        body(&leadership)
        self = .leading(leadership)
    }

    /// Set while the node refuses everything (see `unserved(_:retry:)`).
    var unserved: Refusal? {
        if case .unserved(let refusal, _) = self { return refusal }
        return nil
    }

    /// The task that reads the log (or waits to read it again), if any: cancelled when the
    /// node leaves the cluster.
    var reader: Reader? {
        switch self {
        case .joining(let reader), .unserved(_, let reader?), .following(let reader?, _): reader
        case .standalone, .unserved, .following, .leading: nil
        }
    }

    /// What happens to a role: each comes from the shell, on the namespace's queue (or while it
    /// is held).
    enum Event {
        /// Starts reading the log from the start by `reader`: at the first join, at a retry
        /// after a failed one, and after a deposal or a log that could not be followed.
        case join(Reader)
        /// The log was read to its end: the node leads with `leadership` when it took the lease,
        /// else follows it (its reader reading on).
        case joined(Leadership?)
        /// The log could not be read: every request is refused with `refusal` until the reader
        /// tries again.
        case joinFailed(Refusal)
        /// The node holds too many namespaces: this one is refused for good.
        case refuse(Refusal)
        /// A follower found the lease free and tries to take it.
        case takeOverStarted
        /// The take-over took the lease and read the log to its end: the node leads now.
        case tookOver(Leadership)
        /// The take-over ended without leading.
        case takeOverFailed
        /// The lease or the log says another node leads since term `term` (`reason` says how).
        case deposed(term: String, reason: String)
        /// The follower's reader met a gap or a damaged batch.
        case readFailed
    }

    /// What the shell does after a transition, in order.
    enum Action {
        /// Cancel a reader that is no longer needed.
        case stopReading(Reader)
        /// Stop leading: the log refuses what it holds (for `reason`), the lease is abandoned,
        /// forwarded writes are no longer served.
        case stopLeading(Leadership, reason: String)
        /// Refuse the answers waiting for records this node will not have.
        case abandonHeld
        /// Drop the tree and everyone who saw it (connections closed, streams cancelled), then
        /// read the log again (`join`).
        case rejoin
        /// Start serving: the registrations of connections a rejoin closed are made, and the
        /// queue held while joining resumes.
        case serve
        /// Let the queue held while joining run, to refuse what comes (the registrations a
        /// rejoin kept wait for a join that succeeds).
        case resume
    }

    /// Moves to the role `event` leads to and returns what the shell must do. An event that
    /// does not fit the role (a second report of one deposal, a take-over ending after the
    /// node rejoined) changes nothing.
    mutating func handle(_ event: Event) -> [Action] {
        switch (self, event) {
        case (.standalone, .join(let reader)):
            self = .joining(reader)
            return []
        case (.unserved(_, let retry), .join(let reader)):
            self = .joining(reader)
            return retry.map { [.stopReading($0)] } ?? []
        case (.following(let reader, _), .join(let newReader)):
            self = .joining(newReader)
            return reader.map { [.stopReading($0)] } ?? []
        case (.joining(let reader), .joined(let leadership)):
            guard let leadership else {
                self = .following(reader: reader, takingOver: false)
                return [.serve]
            }
            self = .leading(leadership)
            return [.serve]
        case (.joining(let reader), .joinFailed(let refusal)):
            self = .unserved(refusal, retry: reader)
            return [.abandonHeld, .resume]
        case (.standalone, .refuse(let refusal)):
            self = .unserved(refusal, retry: nil)
            return []
        case (.following(let reader, false), .takeOverStarted):
            self = .following(reader: reader, takingOver: true)
            return []
        case (.following(let reader, true), .tookOver(let leadership)):
            self = .leading(leadership)
            return reader.map { [.stopReading($0)] } ?? []
        case (.following(let reader, true), .takeOverFailed):
            self = .following(reader: reader, takingOver: false)
            return []
        case (.leading(let leadership), .deposed(let term, let reason)) where leadership.term == term:
            // What it committed but could not publish is in its tree: it serves no writes (nor
            // forwards them) until it has read the log again.
            self = .unserved(.unavailable(Namespace.notLeading), retry: nil)
            return [.stopLeading(leadership, reason: reason), .abandonHeld, .rejoin]
        case (.following, .readFailed):
            return [.rejoin]
        default:
            return []
        }
    }
}

/// A leadership's term (`<node>.<lease revision>`): a deposal names the term it ends, so a
/// second report of it finds a later term, or none, and changes nothing.
protocol LeadershipTerm {
    var term: String { get }
}

extension NamespaceRole: Sendable where Leadership: Sendable, Reader: Sendable {}
