import KindlingCore
import Testing

@testable import KindlingServer

/// Every source of a request is counted once, under its real action: a write a cluster
/// follower forwards as its client's action on the leader, and an onDisconnect write under its
/// own, wherever it runs; never as a REST write unless a REST client made it.
struct RequestActionTests {
    let connection = ConnectionID(value: 1)

    func set(_ path: String, _ value: JSONValue, hash: String? = nil) throws -> Operation {
        .set(path: try Path(path), data: value, precondition: hash.map(Precondition.hash))
    }

    func update(_ path: String) throws -> Operation {
        .update(path: try Path(path), members: [JSONMember("a", .number(1))])
    }

    /// The tally's counts as "action outcome" → count.
    func counts(_ state: inout NamespaceState) -> [String: Int] {
        var counts: [String: Int] = [:]
        for (action, outcome, count) in state.tally.take() { counts["\(action.label) \(outcome.label)"] = count }
        return counts
    }

    @Test func aForwardedWriteIsCountedAsItsClientsAction() throws {
        let set = try set("/x", 1)
        #expect(RequestAction(set, by: .forwarded(.realtime, .anonymous)) == .set)
        #expect(RequestAction(try self.set("/x", 1, hash: "h"), by: .forwarded(.realtime, .anonymous)) == .transaction)
        #expect(RequestAction(try update("/x"), by: .forwarded(.realtime, .anonymous)) == .update)
        #expect(RequestAction(.push(path: try Path("/x"), data: 1), by: .forwarded(.realtime, .anonymous)) == .push)
        #expect(RequestAction(set, by: .forwarded(.rest, .anonymous)) == .restWrite)
        #expect(RequestAction(set, by: .forwarded(.onDisconnect, .anonymous)) == .ondisconnectSet)
        #expect(RequestAction(try update("/x"), by: .forwarded(.onDisconnect, .anonymous)) == .ondisconnectUpdate)
    }

    @Test func anOnDisconnectWriteIsCountedAsOneAtACloseACrashOrADeadNode() throws {
        for run in [Caller.OnDisconnectRun.close(connection), .crash, .deadNode] {
            #expect(RequestAction(try set("/x", 1), by: .onDisconnect(run, .anonymous)) == .ondisconnectSet)
            #expect(RequestAction(try update("/x"), by: .onDisconnect(run, .anonymous)) == .ondisconnectUpdate)
        }
        #expect(RequestAction.ondisconnectSet.label == "ondisconnect_set")
        #expect(RequestAction.ondisconnectUpdate.label == "ondisconnect_update")
    }

    /// The follower names the origin on the wire; a request without one (a node of an earlier
    /// version) counts as a REST write, as every forwarded write did before.
    @Test func aForwardedWriteCarriesItsOriginToTheLeader() throws {
        for origin in [ForwardedWrite.Origin.realtime, .rest, .onDisconnect] {
            let write = try #require(ForwardedWrite(try set("/x", 1), auth: .anonymous, origin: origin))
            #expect(try ForwardedWrite.decode(write.encoded()).origin == origin)
        }
        let older = try ForwardedWrite.decode(Array(#"{"o":"set","p":["x"],"d":1,"a":{"k":"anonymous"}}"#.utf8))
        #expect(older.origin == .rest)
        let registration = try #require(ForwardedWrite(try set("/x", 1), auth: .admin, origin: .onDisconnect))
        let stored = try #require(StoredRegistrations(writes: [registration]).encoded())
        #expect(try StoredRegistrations.decode(stored).writes.map(\.origin) == [.onDisconnect])
    }

    /// At a close, the queued writes go through the checkpoint like any request: counted under
    /// their own action, a refused one noted with its connection, and none as a REST write.
    @Test func onDisconnectWritesAtACloseAreCountedUnderTheirOwnAction() throws {
        let rules = try RulesDocument.parse(#"{"rules": {".read": true, "open": {".write": true}, "locked": {".write": "auth != null"}}}"#)
        var state = NamespaceState(name: "t", rules: rules, rulesAreOpen: false)
        state.connect(connection)
        var out: [Outgoing] = []
        let user = AuthState.overridden(by: .object([JSONMember("uid", .string("alice"))]))
        _ = state.apply(.authenticate(user), by: .realtime(connection), now: 0, into: &out)
        _ = state.apply(.onDisconnectSet(path: try Path("/open/a"), data: 1), by: .realtime(connection), now: 0, into: &out)
        _ = state.apply(
            .onDisconnectUpdate(path: try Path("/open"), members: [JSONMember("b", .number(2))]), by: .realtime(connection), now: 0, into: &out)
        _ = state.apply(.onDisconnectSet(path: try Path("/locked/c"), data: 3), by: .realtime(connection), now: 0, into: &out)
        // The identity that queued them drops: the rules refuse the locked write when it runs.
        _ = state.apply(.authenticate(.anonymous), by: .realtime(connection), now: 0, into: &out)
        #expect(counts(&state) == ["auth ok": 2, "ondisconnect ok": 3])
        _ = state.takeRefusals()

        let problems = state.disconnect(connection, now: 0, into: &out)
        #expect(problems.count == 1)
        #expect(counts(&state) == ["ondisconnect_set ok": 1, "ondisconnect_update ok": 1, "ondisconnect_set permission_denied": 1])
        let refusals = state.takeRefusals()
        #expect(refusals.notes.map(\.action) == [.ondisconnectSet])
        #expect(refusals.notes.first?.connection == connection)
        #expect(state.database.tree.node(at: try Path("/open")).jsonText(format: .export) == #"{"a":1,"b":2}"#)
    }

    /// A write a follower forwarded, decided by the leader's checkpoint: counted there as the
    /// action its client asked for.
    @Test func theLeaderCountsAForwardedWriteAsItsClientsAction() throws {
        var state = NamespaceState(name: "t")
        var out: [Outgoing] = []
        for origin in [ForwardedWrite.Origin.realtime, .rest, .onDisconnect] {
            let write = try #require(ForwardedWrite(try set("/x", .string("\(origin)")), auth: .anonymous, origin: origin))
            let decoded = try ForwardedWrite.decode(write.encoded())
            _ = state.apply(decoded.operation, by: decoded.caller, now: 0, into: &out)
        }
        #expect(counts(&state) == ["set ok": 1, "rest_write ok": 1, "ondisconnect_set ok": 1])
    }
}
