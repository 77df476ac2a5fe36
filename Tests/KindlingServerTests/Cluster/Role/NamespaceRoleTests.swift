import Testing

@testable import KindlingServer

/// A namespace's cluster role as a pure state machine: events in, the new role and the shell's
/// actions out, with readers and leaderships stood in for by names.
@Suite
struct NamespaceRoleTests {
    struct Lead: LeadershipTerm {
        let term: String
    }
    typealias Role = NamespaceRole<Lead, String>

    /// The role in a word, with what it carries.
    static func name(_ role: Role) -> String {
        switch role {
        case .standalone: "standalone"
        case .unserved(let refusal, let retry): "unserved \(refusal.wire.status) retry \(retry ?? "none")"
        case .joining(let reader): "joining \(reader)"
        case .following(let reader, let takingOver): "following \(reader ?? "none")\(takingOver ? " taking over" : "")"
        case .leading(let lead): "leading \(lead.term)"
        }
    }

    static func names(_ actions: [Role.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .stopReading(let reader): "stop reading \(reader)"
            case .stopLeading(let lead, let reason): "stop leading \(lead.term): \(reason)"
            case .abandonHeld: "abandon held"
            case .rejoin: "rejoin"
            case .serve: "serve"
            case .resume: "resume"
            }
        }
    }

    /// Applies `event`, returning the actions' names and checking the role it leads to.
    static func step(_ role: inout Role, _ event: Role.Event, to expected: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let actions = role.handle(event)
        #expect(name(role) == expected, sourceLocation: sourceLocation)
        return names(actions)
    }

    @Test func aNodeThatFindsTheLeaseTakenFollows() {
        var role = Role.standalone
        #expect(role.standing == .standalone)
        #expect(Self.step(&role, .join("r1"), to: "joining r1") == [])
        #expect(role.standing == .unsettled)
        #expect(role.reader == "r1")
        #expect(Self.step(&role, .joined(nil), to: "following r1") == ["serve"])
        #expect(role.standing == .following)
        #expect(role.reader == "r1")
        #expect(role.leadership == nil && role.unserved == nil)
    }

    @Test func aNodeThatTakesTheLeaseLeads() {
        var role = Role.joining("r1")
        #expect(Self.step(&role, .joined(Lead(term: "a.1")), to: "leading a.1") == ["serve"])
        #expect(role.standing == .leading)
        #expect(role.reader == nil)
        #expect(role.leadership?.term == "a.1")
    }

    /// A join that fails refuses everything, the failed reader waiting to try again; the next
    /// join stops it.
    @Test func aFailedJoinRefusesEverythingUntilTheNextJoin() {
        var role = Role.joining("r1")
        #expect(Self.step(&role, .joinFailed(.unavailable(Namespace.notJoined)), to: "unserved unavailable retry r1") == ["abandon held", "resume"])
        #expect(role.unserved != nil)
        #expect(role.standing == .unsettled)
        #expect(role.reader == "r1")
        #expect(Self.step(&role, .join("r2"), to: "joining r2") == ["stop reading r1"])
    }

    /// Over the cap of namespaces: refused for good, with no reader to cancel.
    @Test func aNamespaceOverTheCapIsRefused() {
        var role = Role.standalone
        #expect(Self.step(&role, .refuse(.namespaceLimit("at most 1")), to: "unserved \(Refusal.namespaceLimit("").wire.status) retry none") == [])
        #expect(role.reader == nil)
    }

    @Test func aFollowerTakesOverOnceAtATime() {
        var role = Role.following(reader: "r1", takingOver: false)
        #expect(Self.step(&role, .takeOverStarted, to: "following r1 taking over") == [])
        #expect(role.standing == .following)
        #expect(Self.step(&role, .takeOverStarted, to: "following r1 taking over") == [])
        #expect(Self.step(&role, .tookOver(Lead(term: "b.2")), to: "leading b.2") == ["stop reading r1"])
        // The take-over's end, reported late, changes nothing.
        #expect(Self.step(&role, .takeOverFailed, to: "leading b.2") == [])
    }

    @Test func aFailedTakeOverGoesOnFollowing() {
        var role = Role.following(reader: "r1", takingOver: true)
        #expect(Self.step(&role, .takeOverFailed, to: "following r1") == [])
        // A take-over that was not started leads nowhere.
        #expect(Self.step(&role, .tookOver(Lead(term: "c.3")), to: "following r1") == [])
    }

    /// A deposal ends only its own term, once: the node refuses writes, drops what it held
    /// for the log and reads the log again.
    @Test func aDeposalEndsItsOwnTermOnce() {
        var role = Role.leading(Lead(term: "a.1"))
        #expect(Self.step(&role, .deposed(term: "a.0", reason: "old"), to: "leading a.1") == [])
        #expect(
            Self.step(&role, .deposed(term: "a.1", reason: "lease lost"), to: "unserved unavailable retry none")
                == ["stop leading a.1: lease lost", "abandon held", "rejoin"])
        #expect(role.standing == .unsettled)
        #expect(Self.step(&role, .deposed(term: "a.1", reason: "log written by another node"), to: "unserved unavailable retry none") == [])
        #expect(Self.step(&role, .join("r2"), to: "joining r2") == [])
    }

    /// A follower whose log cannot be read further reads it again, with a new reader.
    @Test func aFollowerThatCannotReadRejoins() {
        var role = Role.following(reader: "r1", takingOver: false)
        #expect(Self.step(&role, .readFailed, to: "following r1") == ["rejoin"])
        #expect(Self.step(&role, .join("r2"), to: "joining r2") == ["stop reading r1"])
    }

    /// Events that do not fit the role change nothing.
    @Test func eventsThatDoNotFitChangeNothing() {
        var role = Role.standalone
        #expect(Self.step(&role, .joined(nil), to: "standalone") == [])
        #expect(Self.step(&role, .takeOverStarted, to: "standalone") == [])
        #expect(Self.step(&role, .readFailed, to: "standalone") == [])
        var joining = Role.joining("r1")
        #expect(Self.step(&joining, .tookOver(Lead(term: "d.4")), to: "joining r1") == [])
        #expect(Self.step(&joining, .refuse(.namespaceLimit("x")), to: "joining r1") == [])
        var leading = Role.leading(Lead(term: "a.1"))
        #expect(Self.step(&leading, .joinFailed(.unavailable("x")), to: "leading a.1") == [])
    }

    /// The leader's own state changes in place; no other role has any.
    @Test func onlyALeaderHasALeadershipToUpdate() {
        var role = NamespaceRole<Counted, String>.leading(Counted(term: "a.1"))
        role.updateLeadership { $0.snapshots += 1 }
        #expect(role.leadership?.snapshots == 1)
        var following = NamespaceRole<Counted, String>.following(reader: "r1", takingOver: false)
        following.updateLeadership { $0.snapshots += 1 }
        #expect(following.leadership == nil)
    }

    struct Counted: LeadershipTerm {
        let term: String
        var snapshots = 0
    }
}
