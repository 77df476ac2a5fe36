import Testing

@testable import KindlingCore

struct DatabaseStateTests {
    let clock = ServerValues(timestamp: 1000)

    func path(_ text: String) -> Path { try! Path(text) }

    mutating func set(_ db: inout DatabaseState<Int>, _ at: String, _ json: String) throws -> [Delivery<Int>] {
        try db.commit(db.tree.resolveSet(path(at), JSONParser.parse(json), serverValues: clock))
    }

    func update(_ db: inout DatabaseState<Int>, _ at: String, _ json: String) throws -> [Delivery<Int>] {
        guard case .object(let members) = try JSONParser.parse(json) else { return [] }
        return db.commit(try db.tree.resolveUpdate(path(at), members, serverValues: clock))
    }

    /// Deliveries as readable lines: "subscriber[tag] put /path json" sorted.
    func lines(_ deliveries: [Delivery<Int>]) -> [String] {
        deliveries.flatMap { delivery in
            delivery.recipients.map { recipient in
                let tag = recipient.tag.map { "[\($0)]" } ?? ""
                switch delivery.change {
                case .put(let path, let node): return "\(recipient.subscriber)\(tag) put \(path) \(node.jsonText(format: .export))"
                case .merge(let path, let entries):
                    let body = entries.map { "\($0.path.relativeString)=\($0.node.jsonText(format: .export))" }.joined(separator: ",")
                    return "\(recipient.subscriber)\(tag) merge \(path) \(body)"
                }
            }
        }.sorted()
    }

    @Test mutating func plainListensSeeWritesAboveAtAndBelow() throws {
        var db = DatabaseState<Int>(root: try Node(jsonText: #"{"a":{"b":{"c":1},"x":2}}"#))
        #expect(lines([db.listen(1, at: path("a"))].compactMap { $0 }) == [#"1 put /a {"b":{"c":1},"x":2}"#])
        #expect(lines([db.listen(2, at: path("a/b/c"))].compactMap { $0 }) == ["2 put /a/b/c 1"])
        #expect(lines([db.listen(3, at: path("z"))].compactMap { $0 }) == ["3 put /z null"])
        // A write below listen 1 and above listen 2.
        #expect(try lines(set(&db, "a/b", #"{"c":5}"#)) == [#"1 put /a/b {"c":5}"#, "2 put /a/b/c 5"])
        // A write at the root: everyone whose data changed.
        #expect(try lines(set(&db, "", #"{"a":{"b":{"c":5}},"z":true}"#)) == [#"1 put /a {"b":{"c":5}}"#, "3 put /z true"])
        // Writing the same value again sends nothing.
        #expect(try lines(set(&db, "a/b/c", "5")).isEmpty)
        // Unrelated writes reach nobody.
        #expect(try lines(set(&db, "q", "1")).isEmpty)
    }

    /// A query served without an index is a plain listen under the query's name: the whole
    /// location and every change there, untagged; it and a default listen at the same place
    /// are two listens with one copy of each change, and each goes with its own unlisten.
    @Test mutating func queriesServedWithoutAnIndexAreTheirOwnPlainListens() throws {
        var db = DatabaseState<Int>(root: try Node(jsonText: #"{"a":{"x":{"n":1},"y":{"n":2}}}"#))
        let query = Query(index: .child(path("n")), limit: QueryLimit(count: 1, fromEnd: false))
        #expect(lines([db.listenUnindexed(1, at: path("a"), query: query)]) == [#"1 put /a {"x":{"n":1},"y":{"n":2}}"#])
        #expect(db.servesUnindexed(1, ListenID(path: path("a"), query: query)))
        #expect(db.indexes.index(.child(path("n")), at: path("a")) == nil)
        #expect(db.windowEntries == 0)
        // Listening again with the query keeps it unindexed, even once another subscriber's
        // listen keeps an index of its order.
        _ = db.listen(2, at: path("a"), query: query, tag: 7)
        #expect(lines([db.listen(1, at: path("a"), query: query, tag: 3)].compactMap { $0 }) == [#"1 put /a {"x":{"n":1},"y":{"n":2}}"#])
        _ = db.listen(1, at: path("a"))
        #expect(db.listenCount == 3)
        #expect(try lines(set(&db, "a/z", #"{"n":0}"#)) == [#"1 put /a/z {"n":0}"#, #"2[7] put /a {"z":{"n":0}}"#])
        db.unlisten(1, at: path("a"))
        #expect(try lines(set(&db, "a/z/n", "5")) == ["1 put /a/z/n 5", #"2[7] put /a {"x":{"n":1}}"#])
        db.unlisten(1, at: path("a"), query: query)
        #expect(!db.servesUnindexed(1, ListenID(path: path("a"), query: query)))
        #expect(try lines(set(&db, "a/w", #"{"n":-1}"#)) == [#"2[7] put /a {"w":{"n":-1}}"#])
        _ = db.listenUnindexed(1, at: path("a"), query: query)
        db.removeSubscriber(1)
        #expect(db.listenCount == 1)
        #expect(try lines(set(&db, "a/w/n", "9")) == [#"2[7] put /a {"x":{"n":1}}"#])
    }

    @Test mutating func aSubscriberGetsOneCopyOfAWrite() throws {
        var db = DatabaseState<Int>()
        _ = db.listen(1, at: path("a"))
        _ = db.listen(1, at: path("a/b"))
        _ = db.listen(1, at: path("a/b/c/d"))
        #expect(try lines(set(&db, "a/b/c", "{\"d\":1}")) == [#"1 put /a/b/c {"d":1}"#])
    }

    @Test func mergesArriveAsMerges() throws {
        var db = DatabaseState<Int>(root: try Node(jsonText: #"{"users":{"ada":{"n":1},"bob":{"n":2}}}"#))
        _ = db.listen(1, at: path("users"))
        _ = db.listen(2, at: path("users/bob"))
        _ = db.listen(3, at: path("users/cy"))
        let out = try lines(update(&db, "users", #"{"ada/n":3,"bob":null}"#))
        #expect(out == ["1 merge /users ada/n=3,bob=null", "2 put /users/bob null"])
    }

    @Test func listenersBelowAMultiLocationUpdateGetOnlyWhatChangedInside() throws {
        var db = DatabaseState<Int>(
            root: try Node(jsonText: #"{"chat":{"c1":{"msgs":{"m1":"hi","m2":"yo"},"title":"dive"},"index":{"ada":{"m1":true}}}}"#)
        )
        _ = db.listen(1, at: path("chat/c1"))
        _ = db.listen(2, at: path("chat/c1/msgs/m3"))
        _ = db.listen(3, at: path("chat/index"))
        _ = db.listen(4, at: path("chat/c1/title"))
        _ = db.listen(5, at: path("chat/c2"))
        _ = db.listen(6, at: path("chat/index/ada/m3/deeper"))
        let query = try Query(wire: JSONParser.parse(#"{"l":1,"vf":"r","i":".key"}"#))
        _ = db.listen(7, at: path("chat/c1/msgs"), query: query, tag: 2)
        let out = try lines(update(&db, "chat", #"{"c1/msgs/m3":"new","index/ada/m3":true,"c1/title":"dive"}"#))
        // 1 hears the new message only (not its old messages), 2 its whole location, 3 the index
        // entry, 7 its window's new last child; the unchanged title, the untouched conversation
        // and 6 (below an entry, empty before and after) hear nothing.
        #expect(
            out == [
                "1 merge /chat/c1 msgs/m3=\"new\"", "2 put /chat/c1/msgs/m3 \"new\"", "3 merge /chat/index ada/m3=true",
                #"7[2] put /chat/c1/msgs {"m3":"new"}"#,
            ]
        )
        // A merge entry above a listener replaces its location: the listener gets all of it.
        #expect(try lines(update(&db, "chat", #"{"c1":{"title":"reef"}}"#)).contains(#"1 put /chat/c1 {"title":"reef"}"#))
    }

    @Test mutating func taggedWindowsMoveAsDataChanges() throws {
        // orderByChild('score'), limitToLast(2): windows c,b then a,c then d,a (wire-protocol.md §8.3).
        var db = DatabaseState<Int>(root: try Node(jsonText: #"{"s":{"a":{"score":1},"b":{"score":2},"c":{"score":3}}}"#))
        let query = try Query(wire: JSONParser.parse(#"{"l":2,"vf":"r","i":"score"}"#))
        #expect(lines([db.listen(7, at: path("s"), query: query, tag: 4)].compactMap { $0 }) == [#"7[4] put /s {"b":{"score":2},"c":{"score":3}}"#])
        #expect(try lines(set(&db, "s/b/score", "0")) == [#"7[4] put /s {"a":{"score":1},"c":{"score":3}}"#])
        #expect(try lines(set(&db, "s/d", #"{"score":9}"#)) == [#"7[4] put /s {"c":{"score":3},"d":{"score":9}}"#])
        #expect(try lines(set(&db, "s/c", "null")) == [#"7[4] put /s {"a":{"score":1},"d":{"score":9}}"#])
        // A change outside the window sends nothing.
        #expect(try lines(set(&db, "s/b/score", "-5")).isEmpty)
        #expect(db.indexes.index(.child(path("score")), at: path("s")) != nil)
        db.unlisten(7, at: path("s"), query: query)
        #expect(db.indexes.index(.child(path("score")), at: path("s")) == nil)
        #expect(db.listenCount == 0)
    }

    @Test func queryReadsUseTheIndexWindow() throws {
        var db = DatabaseState<Int>(root: try Node(jsonText: #"{"s":{"a":3,"b":1,"c":2}}"#))
        db.declareIndex(.value, at: path("s"))
        let query = Query(index: .value, limit: QueryLimit(count: 2, fromEnd: false))
        #expect(db.read(path("s"), query: query).jsonText() == #"{"b":1,"c":2}"#)
    }

    @Test mutating func anOrderOnlyQueryAndTheDefaultListenAreTwoListens() throws {
        var db = DatabaseState<Int>()
        _ = db.listen(1, at: path("a"))
        _ = db.listen(1, at: path("a"), query: Query(index: .value))
        db.unlisten(1, at: path("a"), query: Query(index: .value))
        #expect(try lines(set(&db, "a", "1")) == ["1 put /a 1"])
        db.unlisten(1, at: path("a"))
        #expect(try lines(set(&db, "a", "2")).isEmpty)
    }

    @Test mutating func removingASubscriberDropsAllItsListens() throws {
        var db = DatabaseState<Int>()
        let query = Query(index: .value, limit: QueryLimit(count: 1, fromEnd: true))
        _ = db.listen(1, at: path("a"))
        _ = db.listen(1, at: path("b"), query: query, tag: 1)
        _ = db.listen(2, at: path("a"))
        db.removeSubscriber(1)
        #expect(db.listenCount == 1)
        #expect(try lines(set(&db, "a", "1")) == ["2 put /a 1"])
        #expect(try lines(set(&db, "b/x", "1")).isEmpty)
    }

    @Test mutating func manyListenersShareOneDelivery() throws {
        var db = DatabaseState<Int>()
        for subscriber in 0..<1000 { _ = db.listen(subscriber, at: path("room")) }
        let deliveries = try set(&db, "room/msg", "\"hi\"")
        #expect(deliveries.count == 1)
        #expect(deliveries[0].recipients.count == 1000)
    }

    /// The windows of query listens share a budget of children: a listen whose window would take
    /// the total past it is refused and registers nothing (its index is given back); windows that
    /// grow with writes are counted, and a listen that goes gives its window back.
    @Test mutating func queryWindowsShareABudget() throws {
        var db = DatabaseState<Int>(root: try Node(jsonText: #"{"s":{"a":{"n":1},"b":{"n":2},"c":{"n":3}}}"#), maxWindowEntries: 5)
        let all = try Query(wire: JSONParser.parse(#"{"sp":0,"i":"n"}"#))
        let two = try Query(wire: JSONParser.parse(#"{"l":2,"i":"n"}"#))
        let top = try Query(wire: JSONParser.parse(#"{"l":1,"vf":"r","i":"n"}"#))
        #expect(db.listen(1, at: path("s"), query: all, tag: 1) != nil)
        #expect(db.windowEntries == 3)
        _ = try set(&db, "s/d", #"{"n":4}"#)
        #expect(db.windowEntries == 4)
        #expect(db.listen(2, at: path("s"), query: two, tag: 2) == nil)
        #expect(db.indexes.entryCount == 4, "the refused listen's hold on the index was given back")
        #expect(db.listen(3, at: path("s"), query: top, tag: 3) != nil)
        #expect(db.windowEntries == 5)
        #expect(db.listen(1, at: path("s"), query: all, tag: 4) != nil, "a window already kept costs nothing more")
        db.unlisten(1, at: path("s"), query: all)
        #expect(db.windowEntries == 1)
        #expect(db.listen(2, at: path("s"), query: two, tag: 2) != nil)
        #expect(db.windowEntries == 3)
        db.removeSubscriber(2)
        db.removeSubscriber(3)
        #expect(db.windowEntries == 0)
    }
}
