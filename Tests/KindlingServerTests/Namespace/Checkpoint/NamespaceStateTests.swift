import KindlingCore
import KindlingProtocol
import Testing

@testable import KindlingServer

/// The namespace logic without sockets: what goes out, to whom, in which order.
struct NamespaceStateTests {
    let a = ConnectionID(value: 1)
    let b = ConnectionID(value: 2)

    /// A request from `{"a":…,"b":…}`, numbered like the SDKs number them.
    func request(_ number: Int?, _ text: String) throws -> Request {
        var inner = String(text.dropFirst())
        if let number { inner = "\"r\":\(number)," + inner }
        guard case .request(let request) = try ClientMessage.decode(#"{"t":"d","d":{"# + inner + "}") else {
            throw ProtocolError(.malformedMessage, "not a request")
        }
        return request
    }

    /// Runs a request as a realtime connection's session would hand it over (emulator mode).
    func handle(_ state: inout NamespaceState, _ request: Request, from connection: ConnectionID, now: Int64, into out: inout [Outgoing]) throws {
        let verifier = try CredentialVerifier(settings: AuthSettings())
        guard let input = SessionInput.from(request, verifier: verifier) else { return }
        state.handle(input, from: connection, now: now, into: &out)
    }

    /// Outputs as "recipient:message" lines, in order.
    func lines(_ out: [Outgoing]) -> [String] {
        out.flatMap { outgoing in outgoing.recipients.map { "\($0.value):\(String(decoding: outgoing.message, as: UTF8.self))" } }
    }

    @Test func aWritersOkComesAfterEveryListenersChange() throws {
        var state = NamespaceState(name: "t")
        state.connect(a)
        state.connect(b)
        var out: [Outgoing] = []
        try handle(&state, try request(1, #"{"a":"q","b":{"p":"/x","h":""}}"#), from: a, now: 0, into: &out)
        try handle(&state, try request(1, #"{"a":"q","b":{"p":"/x","h":""}}"#), from: b, now: 0, into: &out)
        out = []
        try handle(&state, try request(2, #"{"a":"p","b":{"p":"/x","d":5}}"#), from: a, now: 0, into: &out)
        let sent = lines(out)
        #expect(sent.count == 3)
        #expect(Set(sent.prefix(2)) == [#"1:{"t":"d","d":{"a":"d","b":{"p":"x","d":5}}}"#, #"2:{"t":"d","d":{"a":"d","b":{"p":"x","d":5}}}"#])
        #expect(sent.last == #"1:{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#)
    }

    @Test func requestsWithoutANumberGetNoResponse() throws {
        var state = NamespaceState(name: "t")
        state.connect(a)
        var out: [Outgoing] = []
        try handle(&state, try request(nil, #"{"a":"n","b":{"p":"/x"}}"#), from: a, now: 0, into: &out)
        try handle(&state, try request(nil, #"{"a":"unauth","b":{}}"#), from: a, now: 0, into: &out)
        #expect(out.isEmpty)
    }

    /// The server's rules, which every namespace starts on, are copied for a namespace once it
    /// has evaluated them enough times; the copy decides as they do, and rules of the
    /// namespace's own are never copied.
    @Test func busyNamespacesTakeACopyOfTheServersRules() throws {
        let shared = try RulesDocument.parse(#"{"rules":{".write":true,"open":{".read":true},"closed":{".read":false}}}"#)
        var state = NamespaceState(name: "t", rules: shared, rulesAreOpen: false, rulesShared: true)
        state.connect(a)
        let evaluations = NamespaceState.evaluationsBeforeUnsharing(shared)
        #expect(state.evaluationsBeforeUnsharing == evaluations)
        var out: [Outgoing] = []
        for number in 1..<evaluations {
            try handle(&state, try request(number, #"{"a":"g","b":{"p":"/open"}}"#), from: a, now: 0, into: &out)
        }
        #expect(state.evaluationsBeforeUnsharing == 1)
        try handle(&state, try request(evaluations, #"{"a":"g","b":{"p":"/closed"}}"#), from: a, now: 0, into: &out)
        #expect(state.evaluationsBeforeUnsharing == nil)
        #expect(state.rules.source == shared.source)
        out = []
        try handle(&state, try request(1, #"{"a":"g","b":{"p":"/open"}}"#), from: a, now: 0, into: &out)
        try handle(&state, try request(2, #"{"a":"g","b":{"p":"/closed"}}"#), from: a, now: 0, into: &out)
        #expect(
            lines(out) == [
                #"1:{"t":"d","d":{"r":1,"b":{"s":"ok","d":null}}}"#,
                #"1:{"t":"d","d":{"r":2,"b":{"s":"permission_denied","d":"Permission denied"}}}"#,
            ])
        _ = state.replaceRules(shared, open: false, shared: true, now: 0, into: &out)
        #expect(state.evaluationsBeforeUnsharing == evaluations)
        _ = state.replaceRules(shared, open: false, shared: false, now: 0, into: &out)
        #expect(state.evaluationsBeforeUnsharing == nil)
    }

    /// Rules put in force again keep each `.indexOn` index once, and rules without it give it
    /// back: its memory and its upkeep on every write end with the declaration.
    @Test func indexesDeclaredByRulesGoWithTheDeclaration() throws {
        let root = try Node(jsonText: #"{"items":{"a":{"n":1},"b":{"n":2}}}"#)
        let indexed = try RulesDocument.parse(#"{"rules":{".read":true,".write":true,"items":{".indexOn":["n"]}}}"#)
        var state = NamespaceState(name: "t", root: root, rules: indexed, rulesAreOpen: false)
        #expect(state.database.indexes.entryCount == 2)
        var out: [Outgoing] = []
        _ = state.replaceRules(indexed, open: false, shared: false, now: 0, into: &out)
        _ = state.replaceRules(try RulesDocument.parse(#"{"rules":{".read":true,".write":true}}"#), open: false, shared: false, now: 0, into: &out)
        #expect(state.database.indexes.entryCount == 0)
        #expect(state.database.indexes.index(.child(try Path("n")), at: try Path("items")) == nil)
    }

    /// An `.indexOn` under a wildcard is built whatever the budget for queries' indexes: past
    /// the cap of orders per location, declared orders are still served and others served
    /// without an index (`no_index`).
    @Test func indexesDeclaredUnderAWildcardAreBuiltPastTheQueryBudget() throws {
        let orders = (0..<20).map { "\"k\($0)\"" }.joined(separator: ",")
        let rules = try RulesDocument.parse(#"{"rules":{".read":true,".write":true,"rooms":{"$room":{".indexOn":["# + orders + "]}}}}")
        var state = NamespaceState(
            name: "t", root: try Node(jsonText: #"{"rooms":{"a":{"m1":{"k0":1},"m2":{"k0":2}}}}"#), rules: rules, rulesAreOpen: false)
        state.connect(a)
        var out: [Outgoing] = []
        for order in 0..<20 {
            out = []
            try handle(
                &state, try request(order + 1, #"{"a":"q","b":{"p":"/rooms/a","q":{"i":"k\#(order)","l":1},"t":\#(order + 1),"h":""}}"#), from: a,
                now: 0, into: &out)
            #expect(lines(out).last?.contains(#""s":"ok""#) == true, "k\(order)")
        }
        out = []
        try handle(&state, try request(21, #"{"a":"q","b":{"p":"/rooms/a","q":{"i":"other","l":1},"t":21,"h":""}}"#), from: a, now: 0, into: &out)
        #expect(lines(out).last == #"1:{"t":"d","d":{"r":21,"b":{"s":"ok","d":{"w":["no_index"]}}}}"#)
        // Listened to again, it is still served without an index, and the answer still says so.
        out = []
        try handle(&state, try request(22, #"{"a":"q","b":{"p":"/rooms/a","q":{"i":"other","l":1},"t":22,"h":""}}"#), from: a, now: 0, into: &out)
        #expect(lines(out).last == #"1:{"t":"d","d":{"r":22,"b":{"s":"ok","d":{"w":["no_index"]}}}}"#)
    }

    /// A query whose index cannot be kept is served without one only to a caller who may read
    /// the whole location, since it is then sent all of it; rules that allow only limited
    /// queries refuse it instead. Rules that later stop allowing the whole location revoke it.
    @Test func queriesServedWithoutAnIndexNeedReadAccessToTheWholeLocation() throws {
        let orders = (0..<IndexStore.maxQueryIndexesPerLocation).map { "k\($0)" }
        let limited = try RulesDocument.parse(#"{"rules":{".write":true,"items":{".read":"query.limitToFirst <= 1"}}}"#)
        var state = NamespaceState(
            name: "t", root: try Node(jsonText: #"{"items":{"a":{"k0":1},"b":{"k0":2}}}"#), rules: limited, rulesAreOpen: false)
        state.connect(a)
        state.connect(b)
        var out: [Outgoing] = []
        for (number, order) in orders.enumerated() {
            try handle(
                &state, try request(number + 1, #"{"a":"q","b":{"p":"/items","q":{"i":"\#(order)","l":1,"vf":"l"},"t":\#(number + 1),"h":""}}"#),
                from: a, now: 0, into: &out)
        }
        out = []
        try handle(
            &state, try request(99, #"{"a":"q","b":{"p":"/items","q":{"i":"other","l":1,"vf":"l"},"t":99,"h":""}}"#), from: b, now: 0, into: &out)
        #expect(lines(out) == [#"2:{"t":"d","d":{"r":99,"b":{"s":"too_big","d":"\#(NamespaceState.indexBudgetRefusal)"}}}"#])

        let open = try RulesDocument.parse(#"{"rules":{".write":true,"items":{".read":true}}}"#)
        _ = state.replaceRules(open, open: false, shared: false, now: 0, into: &out)
        out = []
        try handle(
            &state, try request(100, #"{"a":"q","b":{"p":"/items","q":{"i":"other","l":1,"vf":"l"},"t":100,"h":""}}"#), from: b, now: 0, into: &out)
        #expect(
            lines(out) == [
                #"2:{"t":"d","d":{"a":"d","b":{"p":"items","d":{"a":{"k0":1},"b":{"k0":2}}}}}"#,
                #"2:{"t":"d","d":{"r":100,"b":{"s":"ok","d":{"w":["no_index"]}}}}"#,
            ])
        #expect(
            state.database.servesUnindexed(
                b, ListenID(path: try Path("items"), query: try Query(wire: try JSONParser.parse(#"{"i":"other","l":1,"vf":"l"}"#)))))
        out = []
        _ = state.replaceRules(limited, open: false, shared: false, now: 0, into: &out)
        #expect(lines(out) == [#"2:{"t":"d","d":{"a":"c","b":{"p":"items","q":[{"i":"other","l":1,"vf":"l"}]}}}"#])
        #expect(state.database.listenCount == orders.count)
    }

    @Test func staleTransactionsWriteNothing() throws {
        var state = NamespaceState(name: "t")
        state.connect(a)
        var out: [Outgoing] = []
        try handle(&state, try request(1, #"{"a":"p","b":{"p":"/n","d":1}}"#), from: a, now: 0, into: &out)
        out = []
        try handle(&state, try request(2, #"{"a":"p","b":{"p":"/n","d":2,"h":"bogus"}}"#), from: a, now: 0, into: &out)
        #expect(lines(out).first?.contains(#""s":"datastale""#) == true)
        #expect(state.database.tree.node(at: try Path("n")).leaf == .number(1))
    }

    @Test func onDisconnectWritesRunInOrderWithServerValuesResolvedAtTheEnd() throws {
        var state = NamespaceState(name: "t")
        state.connect(a)
        state.connect(b)
        var out: [Outgoing] = []
        try handle(&state, try request(1, #"{"a":"o","b":{"p":"/p/a","d":{".sv":"timestamp"}}}"#), from: a, now: 100, into: &out)
        try handle(&state, try request(2, #"{"a":"o","b":{"p":"/p/a","d":"second"}}"#), from: a, now: 100, into: &out)
        try handle(&state, try request(3, #"{"a":"om","b":{"p":"/p","d":{"b":{".sv":"timestamp"}}}}"#), from: a, now: 100, into: &out)
        try handle(&state, try request(4, #"{"a":"o","b":{"p":"/bad","d":{"a.b":1}}}"#), from: a, now: 100, into: &out)
        #expect(lines(out).last?.contains("invalid_path") == true)
        try handle(&state, try request(1, #"{"a":"q","b":{"p":"/p","h":""}}"#), from: b, now: 100, into: &out)
        out = []
        let problems = state.disconnect(a, now: 777, into: &out)
        #expect(problems.isEmpty)
        #expect(state.database.tree.root.jsonText() == #"{"p":{"a":"second","b":777}}"#)
        // Every line goes to b; with no lines at all the check below would pass on nothing.
        try #require(!lines(out).isEmpty)
        #expect(lines(out).allSatisfy { $0.hasPrefix("2:") })
        #expect(state.connections[a] == nil)
    }
}
