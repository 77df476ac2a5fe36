import KindlingCore
import Synchronization
import Testing

@testable import KindlingServer

/// The checkpoint's records while a profiler listens (`NamespaceState.profiling`), without a
/// server: one per operation, named as the Firebase CLI reads them, then each write's broadcast;
/// and none, of any kind, while nobody profiles.
struct ProfileTrailTests {
    static let rules = #"{"rules": {".read": true, "open": {".write": true, ".indexOn": ["score"]}, "locked": {".write": false}}}"#
    static let listener = ConnectionID(value: 7)
    static let writer = ConnectionID(value: 8)

    /// A clock that moves 1,000 ns each time it is read, so every timing is known.
    final class StepClock: Sendable {
        private let ticks = Mutex<UInt64>(0)
        func now() -> UInt64 {
            ticks.withLock {
                $0 += 1000; return $0
            }
        }
    }

    static func state() throws -> NamespaceState {
        var state = NamespaceState(name: "t", rules: try RulesDocument.parse(rules), rulesAreOpen: false)
        state.connect(listener)
        state.connect(writer)
        return state
    }

    static func profiled() throws -> NamespaceState {
        var state = try state()
        let clock = StepClock()
        state.profiling = ProfileTrail(clock: { clock.now() })
        return state
    }

    @Test func aWriteIsOneRecordThenItsBroadcastToTheListeners() throws {
        var state = try Self.profiled()
        var out: [Outgoing] = []
        _ = state.apply(
            .listen(path: try Path("/open"), query: Query(), tag: nil, hash: "", wireQuery: nil), by: .realtime(Self.listener), now: 0, into: &out)
        let listen = state.takeProfile()
        #expect(listen.map(\.name) == [.listenerListen])
        #expect(listen.first?.bytes == out.reduce(0) { $0 + $1.message.count })
        #expect(listen.first?.connection == Self.listener)
        out = []
        _ = state.apply(.set(path: try Path("/open/a"), data: ["n": 1], precondition: nil), by: .realtime(Self.writer), now: 0, into: &out)
        let records = state.takeProfile()
        #expect(records.map(\.name) == [.realtimeWrite, .listenerBroadcast])
        #expect(records[0].path == (try Path("/open/a")))
        #expect(records[0].bytes == 7)  // {"n":1}
        #expect(records[0].allowed == true)
        #expect(records[0].connection == Self.writer)
        // Read at its start and its end; its broadcast read the clock twice inside it.
        #expect(records[0].nanoseconds == 3000)
        #expect(records[1].path == (try Path("/open/a")))
        #expect(records[1].clientsUpdated == 1)
        #expect(records[1].bytes == out.reduce(0) { $0 + $1.message.count })
        #expect(records[1].nanoseconds == 1000)
        #expect(state.takeProfile().isEmpty)
    }

    @Test func aWriteNobodyListensToStillHasABroadcastOfNothing() throws {
        var state = try Self.profiled()
        var out: [Outgoing] = []
        _ = state.apply(.update(path: try Path("/open"), members: [JSONMember("b", "xy")]), by: .rest(.anonymous), now: 0, into: &out)
        let records = state.takeProfile()
        #expect(records.map(\.name) == [.restUpdate, .listenerBroadcast])
        #expect(records[0].bytes == 10)  // {"b":"xy"}
        #expect(records[1].clientsUpdated == 0 && records[1].bytes == 0)
    }

    @Test func aRefusedWriteIsNotAllowedAndBroadcastsNothing() throws {
        var state = try Self.profiled()
        var out: [Outgoing] = []
        _ = state.apply(.set(path: try Path("/locked/a"), data: 1, precondition: nil), by: .rest(.anonymous), now: 0, into: &out)
        let records = state.takeProfile()
        #expect(records.map(\.name) == [.restWrite])
        #expect(records.first?.allowed == false)
    }

    @Test func readsCarryTheirQueryAndWhetherAnIndexIsDeclared() throws {
        var state = try Self.profiled()
        var out: [Outgoing] = []
        _ = state.apply(.set(path: try Path("/open/a"), data: ["score": 3, "age": 1], precondition: nil), by: .rest(.admin), now: 0, into: &out)
        _ = state.takeProfile()
        let byScore = Query(index: .child(try Path("score")), limit: QueryLimit(count: 1, fromEnd: false))
        let byAge = Query(index: .child(try Path("age")), limit: QueryLimit(count: 1, fromEnd: false))
        let byKey = Query(index: .key, limit: QueryLimit(count: 1, fromEnd: false))
        for query in [byScore, byAge, byKey] {
            _ = state.apply(
                .listen(path: try Path("/open"), query: query, tag: 1, hash: "", wireQuery: nil), by: .realtime(Self.listener), now: 0, into: &out)
        }
        _ = state.apply(.get(path: try Path("/open"), query: byAge), by: .rest(.anonymous), now: 0, into: &out)
        let records = state.takeProfile()
        #expect(records.map(\.name) == [.listenerListen, .listenerListen, .listenerListen, .restRead])
        #expect(records.map(\.unIndexed) == [false, true, false, true])
        #expect(records[1].query == byAge)
        // The JSON of what was read: {"a":{"age":1,"score":3}}.
        #expect(records[3].bytes == 25)
    }

    @Test func onDisconnectWritesThatRunAreRealtimeWritesOfTheirConnection() throws {
        var state = try Self.profiled()
        var out: [Outgoing] = []
        _ = state.apply(.onDisconnectSet(path: try Path("/open/gone"), data: true), by: .realtime(Self.writer), now: 0, into: &out)
        #expect(state.takeProfile().isEmpty)
        _ = state.disconnect(Self.writer, now: 0, into: &out)
        let records = state.takeProfile()
        #expect(records.map(\.name) == [.realtimeWrite, .listenerBroadcast])
        #expect(records.first?.connection == Self.writer)
    }

    @Test func nothingIsNotedWhileNobodyProfiles() throws {
        var state = try Self.state()
        var out: [Outgoing] = []
        _ = state.apply(
            .listen(path: try Path("/open"), query: Query(), tag: nil, hash: "", wireQuery: nil), by: .realtime(Self.listener), now: 0, into: &out)
        _ = state.apply(.set(path: try Path("/open/a"), data: 1, precondition: nil), by: .realtime(Self.writer), now: 0, into: &out)
        #expect(state.profiling == nil)
        #expect(state.takeProfile().isEmpty)
        #expect(out.count == 2)  // the listen's data, then the write's event: the same outputs as profiled
    }

    @Test func recordsAreNamedAsTheFirebaseCLIReadsThem() throws {
        let path = try Path("/a")
        let set = Operation.set(path: path, data: 1, precondition: nil)
        #expect(ProfileOperation(set, by: .realtime(Self.writer)) == .realtimeWrite)
        #expect(ProfileOperation(.set(path: path, data: 1, precondition: .hash("h")), by: .realtime(Self.writer)) == .realtimeTransaction)
        #expect(ProfileOperation(.push(path: path, data: 1), by: .rest(.admin)) == .restWrite)
        #expect(ProfileOperation(.update(path: path, members: []), by: .forwarded(.rest, .admin)) == .restUpdate)
        #expect(ProfileOperation(.update(path: path, members: []), by: .forwarded(.realtime, .admin)) == .realtimeUpdate)
        #expect(ProfileOperation(set, by: .onDisconnect(.crash, .admin)) == .realtimeWrite)
        #expect(ProfileOperation(.get(path: path, query: Query()), by: .realtime(Self.writer)) == .realtimeRead)
        #expect(ProfileOperation(.openStream(path: path, query: Query(), format: .plain), by: .stream(Self.writer, .admin)) == .listenerListen)
        #expect(ProfileOperation(.unlisten(path: path, query: Query()), by: .realtime(Self.writer)) == .listenerUnlisten)
        #expect(ProfileOperation(.onDisconnectSet(path: path, data: 1), by: .realtime(Self.writer)) == nil)
        #expect(ProfileOperation(.authenticate(.admin), by: .realtime(Self.writer)) == nil)
    }

    @Test func aRecordIsOneLineOfJSONInALogEvent() throws {
        var record = ProfileRecord(name: .restRead, timestamp: 1_700_000_000_123, path: try Path("/a/b c"))
        record.nanoseconds = 1_234_567
        record.pendingNanoseconds = 500
        record.bytes = 42
        record.allowed = true
        record.query = Query(index: .child(try Path("x/y")), limit: QueryLimit(count: 2, fromEnd: true))
        record.unIndexed = true
        record.client = "127.0.0.1:5000"
        let text = String(decoding: ProfileRecord.events([record]), as: UTF8.self)
        #expect(
            text
                == #"event: log\#ndata: {"name":"rest-read","timestamp":1700000000123,"path":["a","b c"],"millis":1.235,"pendingTime":0.001,"bytes":42,"allowed":true,"querySet":[{"index":{"path":["x","y"]},"default":false,"q":{"l":2,"vf":"r","i":"x/y"}}],"unIndexed":true,"client":{"remoteAddress":"127.0.0.1:5000"}}\#n\#n"#
        )
        #expect(
            String(decoding: ProfileRecord.gap(dropped: 3, timestamp: 5), as: UTF8.self) == "event: gap\ndata: {\"dropped\":3,\"timestamp\":5}\n\n")
    }
}
