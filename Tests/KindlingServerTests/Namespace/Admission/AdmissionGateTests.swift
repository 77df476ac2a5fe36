import KindlingCore
import Testing

@testable import KindlingServer

/// The one admission in front of a namespace's checkpoint, without a namespace: each source of
/// requests, each standing in the cluster, and when it asks whether writes can be taken.
@Suite
struct AdmissionGateTests {
    static let alice = AuthState.overridden(by: .object([JSONMember("uid", .string("alice"))]))
    static let connection = ConnectionID(value: 7)

    /// Every source a request reaches a namespace from.
    static let callers: [Caller] = [
        .realtime(connection), .stream(connection, alice), .rest(alice), .forwarded(.realtime, alice),
        .onDisconnect(.close(connection), alice), .onDisconnect(.crash, alice), .onDisconnect(.deadNode, alice),
    ]

    /// A writes check that answers `writes`, counting how often it is asked.
    final class Check {
        var asked = 0
        let writes: Refusal?
        init(_ writes: Refusal? = nil) { self.writes = writes }
        func gate(unserved: Refusal? = nil, _ standing: AdmissionGate.Standing) -> Gate {
            Gate(gate: AdmissionGate(unserved: unserved, standing: standing), check: self)
        }
    }

    /// A gate asked with `check`.
    struct Gate {
        var gate: AdmissionGate
        let check: Check
        var askedWrites: Bool { gate.askedWrites }
        mutating func admit(_ kind: AdmissionGate.Kind, from caller: Caller, forgotten: Bool = false) -> Admission {
            gate.admit(kind, from: caller, forgotten: forgotten) {
                check.asked += 1
                return check.writes
            }
        }
    }

    /// "decide", "forward", or "refuse " and the refusal's wire status.
    static func verdict(_ admission: Admission) -> String {
        switch admission {
        case .decide: "decide"
        case .forward: "forward"
        case .refuse(let refusal): "refuse \(refusal.wire.status)"
        }
    }

    @Test func standaloneDecidesEverySourceAndAsksAboutWritesOnce() {
        let check = Check()
        var gate = check.gate(.standalone)
        for caller in Self.callers where !caller.isForwardedOrDeadNode {
            for kind in [AdmissionGate.Kind.read, .write, .registration] {
                #expect(Self.verdict(gate.admit(kind, from: caller)) == "decide", "\(caller) \(kind)")
            }
        }
        #expect(check.asked == 1)
        #expect(gate.askedWrites)
    }

    @Test func readsNeverAskAboutWrites() {
        let check = Check(.unavailable(Namespace.unwritable))
        var gate = check.gate(.standalone)
        for caller in Self.callers where !caller.isForwardedOrDeadNode {
            #expect(Self.verdict(gate.admit(.read, from: caller)) == "decide")
        }
        #expect(check.asked == 0)
        #expect(!gate.askedWrites)
    }

    /// Failing storage refuses writes now, from every source, but not onDisconnect
    /// registrations: their writes are refused when they run.
    @Test func failingStorageRefusesWritesButNotRegistrations() {
        let check = Check(.unavailable(Namespace.unwritable))
        var gate = check.gate(.standalone)
        for caller in [
            Caller.realtime(Self.connection), .rest(Self.alice), .onDisconnect(.close(Self.connection), Self.alice),
            .onDisconnect(.crash, Self.alice),
        ] {
            #expect(Self.verdict(gate.admit(.write, from: caller)) == "refuse unavailable")
        }
        #expect(Self.verdict(gate.admit(.registration, from: .realtime(Self.connection))) == "decide")
        #expect(check.asked == 1)
    }

    /// The namespace cap refuses a first write and an onDisconnect registration alike (either
    /// would make the namespace exist).
    @Test func theNamespaceCapRefusesRegistrationsToo() {
        let check = Check(.namespaceLimit("at most 2 namespaces"))
        var gate = check.gate(.standalone)
        #expect(Self.verdict(gate.admit(.registration, from: .realtime(Self.connection))) == "refuse \(Refusal.namespaceLimit("").wire.status)")
        #expect(Self.verdict(gate.admit(.write, from: .rest(Self.alice))) == "refuse \(Refusal.namespaceLimit("").wire.status)")
        #expect(Self.verdict(gate.admit(.read, from: .rest(Self.alice))) == "decide")
    }

    /// A namespace that serves nothing refuses every request with its reason, without asking
    /// about writes.
    @Test func anUnservedNamespaceRefusesEverything() {
        let check = Check()
        var gate = check.gate(unserved: .unavailable(Namespace.notJoined), .unsettled)
        for caller in Self.callers where !caller.isForwardedOrDeadNode {
            for kind in [AdmissionGate.Kind.read, .write, .registration] {
                guard case .refuse(.unavailable(let message)) = gate.admit(kind, from: caller) else {
                    Issue.record("\(caller) \(kind) was let in")
                    continue
                }
                #expect(message == Namespace.notJoined)
            }
        }
        #expect(check.asked == 0)
    }

    /// A connection the namespace forgot while it was open: nothing more it sends is taken.
    @Test func aForgottenConnectionIsRefused() {
        var gate = Check().gate(.standalone)
        #expect(Self.verdict(gate.admit(.read, from: .realtime(Self.connection), forgotten: true)) == "refuse unavailable")
        #expect(Self.verdict(gate.admit(.read, from: .realtime(Self.connection))) == "decide")
    }

    /// A follower forwards its clients' writes (onDisconnect writes at a close too) to the
    /// leader without asking about its own, and decides reads and registrations itself.
    @Test func aFollowerForwardsWrites() {
        let check = Check(.unavailable(Namespace.notLeading))
        var gate = check.gate(.following)
        for caller in [Caller.realtime(Self.connection), .rest(Self.alice), .onDisconnect(.close(Self.connection), Self.alice)] {
            #expect(Self.verdict(gate.admit(.write, from: caller)) == "forward")
            #expect(Self.verdict(gate.admit(.read, from: caller)) == "decide")
        }
        #expect(Self.verdict(gate.admit(.registration, from: .realtime(Self.connection))) == "decide")
        #expect(check.asked == 1)  // the registration's
    }

    /// Only a leader whose log is healthy decides a forwarded write or a dead node's
    /// registrations; anyone else refuses them (the forwarded one silently, see
    /// `Namespace.serveForwarded`).
    @Test func onlyAHealthyLeaderDecidesForwardedWritesAndDeadNodesRegistrations() {
        let fromOthers: [Caller] = [.forwarded(.rest, Self.alice), .onDisconnect(.deadNode, Self.alice)]
        for caller in fromOthers {
            var leading = Check().gate(.leading)
            #expect(Self.verdict(leading.admit(.write, from: caller)) == "decide")
            var unhealthy = Check(.unavailable(Namespace.notLeading)).gate(.leading)
            #expect(Self.verdict(unhealthy.admit(.write, from: caller)) == "refuse unavailable")
            for standing in [AdmissionGate.Standing.following, .unsettled, .standalone] {
                let check = Check()
                var gate = check.gate(standing)
                #expect(Self.verdict(gate.admit(.write, from: caller)) == "refuse unavailable", "\(standing)")
                #expect(check.asked == 0)
            }
        }
    }

    /// A node that is between roles (joining, failed, deposed) decides reads and refuses
    /// writes with what its check says.
    @Test func anUnsettledNodeRefusesWrites() {
        var gate = Check(.unavailable(Namespace.unwritable)).gate(.unsettled)
        #expect(Self.verdict(gate.admit(.write, from: .realtime(Self.connection))) == "refuse unavailable")
        #expect(Self.verdict(gate.admit(.read, from: .realtime(Self.connection))) == "decide")
    }

    @Test func operationsNameTheirKind() throws {
        let path = try Path("a")
        #expect(Operation.set(path: path, data: 1, precondition: nil).admission == .write)
        #expect(Operation.update(path: path, members: []).admission == .write)
        #expect(Operation.push(path: path, data: 1).admission == .write)
        #expect(Operation.onDisconnectSet(path: path, data: 1).admission == .registration)
        #expect(Operation.onDisconnectUpdate(path: path, members: []).admission == .registration)
        #expect(Operation.onDisconnectCancel(path: path).admission == .read)
        #expect(Operation.get(path: path, query: Query()).admission == .read)
        #expect(Operation.authenticate(.anonymous).admission == .read)
    }
}

extension Caller {
    /// The callers only a leader takes.
    fileprivate var isForwardedOrDeadNode: Bool {
        switch self {
        case .forwarded, .onDisconnect(.deadNode, _): true
        default: false
        }
    }
}
