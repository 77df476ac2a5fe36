import KindlingCore
import Testing

@testable import KindlingServer

/// The checkpoint (`NamespaceState.apply`) without a server: what a refusal leaves unchanged,
/// what a one-off request's answer carries, and the per-connection limits.
struct NamespaceStateCheckpointTests {
    static let rules = #"{"rules": {".read": true, "open": {".write": true}, "locked": {".write": false}}}"#
    static let connection = ConnectionID(value: 4)

    static func state(limits: ConnectionLimits = ConnectionLimits()) throws -> NamespaceState {
        var state = NamespaceState(name: "t", rules: try RulesDocument.parse(rules), rulesAreOpen: false, limits: limits)
        state.connect(connection)
        return state
    }

    static func text(_ state: NamespaceState, _ path: String) throws -> String {
        state.database.tree.node(at: try Path(path)).jsonText(format: .export)
    }

    /// A write the rules refuse changes nothing and tells no listener anything.
    @Test func aRefusedWriteChangesNothing() throws {
        var state = try Self.state()
        var out: [Outgoing] = []
        _ = state.apply(
            .listen(path: try Path("/"), query: Query(), tag: nil, hash: "", wireQuery: nil), by: .realtime(Self.connection), now: 0, into: &out)
        out = []
        guard
            case .refused(.permissionDenied) = state.apply(
                .set(path: try Path("/locked/a"), data: 1, precondition: nil), by: .rest(.anonymous), now: 0, into: &out)
        else {
            Issue.record("the locked write was not refused")
            return
        }
        #expect(out.isEmpty)
        #expect(try Self.text(state, "/") == "null")
        #expect(state.takeJournal().isEmpty)
    }

    /// A multi-path update is one write: one member the rules refuse refuses all of them.
    @Test func anUpdateIsAllOrNothing() throws {
        var state = try Self.state()
        var out: [Outgoing] = []
        let members = [JSONMember("open/a", .number(1)), JSONMember("locked/b", .number(2))]
        guard
            case .refused(.permissionDenied) = state.apply(.update(path: try Path("/"), members: members), by: .rest(.anonymous), now: 0, into: &out)
        else {
            Issue.record("the update was not refused")
            return
        }
        #expect(try Self.text(state, "/open") == "null")
        let allowed = state.apply(
            .update(path: try Path("/open"), members: [JSONMember("a", 1), JSONMember("b", 2)]), by: .rest(.anonymous), now: 0, into: &out)
        guard case .written(.updated(let entries), let location?) = allowed else {
            Issue.record("the update was not written: \(allowed)")
            return
        }
        #expect(entries.count == 2)
        #expect(location.jsonText(format: .export) == #"{"a":1,"b":2}"#)
        #expect(state.takeJournal().count == 1)
    }

    /// REST `if-match`: the write goes through only while the ETag still names the data there,
    /// and a failed one carries the data now (the caller may read it).
    @Test func anETagPreconditionGuardsTheWrite() throws {
        var state = try Self.state()
        var out: [Outgoing] = []
        let path = try Path("/open/n")
        _ = state.apply(.set(path: path, data: 1, precondition: nil), by: .rest(.anonymous), now: 0, into: &out)
        let tag = ETag.of(state.database.tree.node(at: path))
        _ = state.apply(.set(path: path, data: 2, precondition: nil), by: .rest(.anonymous), now: 0, into: &out)
        guard
            case .refused(.preconditionFailed(let current?)) = state.apply(
                .set(path: path, data: 3, precondition: .etag(tag)), by: .rest(.anonymous), now: 0, into: &out)
        else {
            Issue.record("a stale ETag was not refused")
            return
        }
        #expect(current.jsonText(format: .export) == "2")
        let fresh = ETag.of(state.database.tree.node(at: path))
        guard
            case .written(.stored(let stored), _) = state.apply(
                .set(path: path, data: 3, precondition: .etag(fresh)), by: .rest(.anonymous), now: 0, into: &out)
        else {
            Issue.record("a current ETag was refused")
            return
        }
        #expect(stored.jsonText(format: .export) == "3")
    }

    /// A push stores its data under a new key, which the answer names.
    @Test func aPushIsAnsweredWithItsKey() throws {
        var state = try Self.state()
        var out: [Outgoing] = []
        guard case .written(.pushed(let key), _) = state.apply(.push(path: try Path("/open"), data: "hi"), by: .rest(.anonymous), now: 0, into: &out)
        else {
            Issue.record("the push was not written")
            return
        }
        #expect(try Self.text(state, "/open/\(key)") == #""hi""#)
    }

    /// A connection over its listens or its onDisconnect operations is refused the next one,
    /// and keeps what it had.
    @Test func aConnectionsLimitsRefuseTheNextRequest() throws {
        var limits = ConnectionLimits()
        limits.maxListens = 1
        limits.maxOnDisconnectOperations = 1
        var state = try Self.state(limits: limits)
        var out: [Outgoing] = []
        let caller = Caller.realtime(Self.connection)
        func listen(_ path: String) throws -> Answer {
            state.apply(.listen(path: try Path(path), query: Query(), tag: nil, hash: "", wireQuery: nil), by: caller, now: 0, into: &out)
        }
        guard case .ok = try listen("/open/a"), case .refused(.limitExceeded) = try listen("/open/b") else {
            Issue.record("the second listen was not refused")
            return
        }
        #expect(state.database.listenCount == 1)
        guard case .ok = state.apply(.onDisconnectSet(path: try Path("/open/x"), data: 1), by: caller, now: 0, into: &out),
            case .refused(.limitExceeded) = state.apply(.onDisconnectSet(path: try Path("/open/y"), data: 2), by: caller, now: 0, into: &out)
        else {
            Issue.record("the second onDisconnect operation was not refused")
            return
        }
        #expect(state.onDisconnectWrites(of: Self.connection).writes.count == 1)
    }
}
