import Testing

@testable import KindlingCore
@testable import KindlingSync

/// Behaviour of `SyncTree` the conformance scenarios leave out: the order of sibling listeners,
/// the server listens it asks for, tags, cancellation, hidden writes.
struct SyncTreeTests {
    let first = RegistrationID(1)
    let second = RegistrationID(2)

    func node(_ json: String) throws -> Node { try Node(jsonText: json) }

    func lastOne(_ count: Int) -> Query { Query(limit: QueryLimit(count: count, fromEnd: true)) }

    @Test func siblingListenersRaiseEventsInUTF16OrderOfTheirNames() throws {
        var tree = SyncTree()
        _ = tree.addListen(path: try Path("a/9"), query: .all, registration: first)
        _ = tree.addListen(path: try Path("a/10"), query: .all, registration: second)
        let events = tree.applyServerOverwrite(path: try Path("a"), node: try node(#"{"9":1,"10":2}"#))
        // JavaScript's string order puts "10" before "9" (key order would not).
        #expect(events.map(\.path.description) == ["/a/10", "/a/9"])
        #expect(events.allSatisfy { $0.kind == .value })
    }

    @Test func deeperListenersRaiseEventsFirst() throws {
        var tree = SyncTree()
        _ = tree.addListen(path: try Path("a"), query: .all, registration: first)
        _ = tree.addListen(path: try Path("a/b"), query: .all, registration: second)
        let events = tree.applyServerOverwrite(path: try Path("a"), node: try node(#"{"b":1}"#))
        #expect(events.map(\.registration) == [second, first, first])
        #expect(events.map(\.kind) == [.value, .childAdded, .value])
    }

    @Test func aDefaultListenReplacesTheListensBelowItAndGivesThemBack() throws {
        var tree = SyncTree()
        let query = lastOne(1)
        let ab = try Path("a/b")
        let a = try Path("a")
        _ = tree.addListen(path: ab, query: query, registration: first)
        let tagged = ServerListen(path: ab, query: query, tag: 1)
        #expect(tree.takeListenChanges() == [.start(tagged)])
        #expect(tree.tag(path: ab, query: query) == 1)

        _ = tree.addListen(path: a, query: .all, registration: second)
        let parent = ServerListen(path: a, query: .all, tag: nil)
        #expect(tree.takeListenChanges() == [.start(parent), .stop(tagged)])

        _ = tree.removeListen(path: a, registration: second)
        #expect(tree.takeListenChanges() == [.start(tagged), .stop(parent)])

        _ = tree.removeListen(path: ab, query: query, registration: first)
        #expect(tree.takeListenChanges() == [.stop(tagged)])
        #expect(tree.tag(path: ab, query: query) == nil)
    }

    @Test func anOrderOnlyQueryIsListenedToAsTheDefaultQueryWithoutATag() throws {
        var tree = SyncTree()
        let byAge = Query(index: .child(try Path("age")))
        _ = tree.addListen(path: try Path("people"), query: byAge, registration: first)
        #expect(tree.takeListenChanges() == [.start(ServerListen(path: try Path("people"), query: .all, tag: nil))])
        #expect(tree.tag(path: try Path("people"), query: byAge) == nil)
    }

    @Test func taggedDataReachesOnlyItsQuery() throws {
        var tree = SyncTree()
        let a = try Path("a")
        _ = tree.addListen(path: a, query: lastOne(1), registration: first)
        let events = tree.applyServerOverwrite(path: a, node: try node(#"{"x":1,"y":2}"#), tag: 1)
        #expect(events.map(\.kind) == [.childAdded, .value])
        #expect(events.first?.childKey == "y")
        #expect(events.last?.node == (try node(#"{"y":2}"#)))
        // A tag nobody holds (the listener left) is ignored.
        #expect(tree.applyServerOverwrite(path: a, node: try node("1"), tag: 99).isEmpty)
    }

    @Test func listenCompleteMakesAnEmptyLocationKnown() throws {
        var tree = SyncTree()
        let a = try Path("a")
        #expect(tree.addListen(path: a, query: .all, registration: first).isEmpty)
        let events = tree.applyListenComplete(path: a)
        #expect(events.count == 1)
        #expect(events.first?.kind == .value)
        #expect(events.first?.node.isEmpty == true)
    }

    @Test func revertingAWriteShowsTheServerDataAgain() throws {
        var tree = SyncTree()
        let a = try Path("a")
        _ = tree.addListen(path: a, query: .all, registration: first)
        _ = tree.applyServerOverwrite(path: a, node: try node("0"))
        let local = tree.applyUserOverwrite(path: a, node: try node("1"), writeID: 0)
        #expect(local.map(\.node) == [try node("1")])
        let reverted = tree.ackUserWrite(writeID: 0, revert: true)
        #expect(reverted.map(\.node) == [try node("0")])
        #expect(tree.ackUserWrite(writeID: 0).isEmpty)
    }

    @Test func hiddenWritesCountForTransactionsButRaiseNoEvents() throws {
        var tree = SyncTree()
        let a = try Path("a")
        _ = tree.addListen(path: a, query: .all, registration: first)
        _ = tree.applyServerOverwrite(path: a, node: try node(#"{"n":1}"#))
        #expect(tree.applyUserOverwrite(path: try Path("a/n"), node: try node("5"), writeID: 0, visible: false).isEmpty)
        #expect(tree.completeEventCache(at: a) == (try node(#"{"n":5}"#)))
        #expect(tree.completeEventCache(at: a, excluding: [0]) == (try node(#"{"n":1}"#)))
        #expect(tree.completeEventCache(at: try Path("elsewhere")).isEmpty)
    }

    @Test func cancellingAListenRemovesEveryRegistrationWithACancelledEvent() throws {
        var tree = SyncTree()
        let a = try Path("a")
        _ = tree.addListen(path: a, query: .all, registration: first)
        _ = tree.addListen(path: a, query: .all, registration: second)
        _ = tree.takeListenChanges()
        let events = tree.cancelListen(path: a, query: .all)
        #expect(events.map(\.kind) == [.cancelled, .cancelled])
        #expect(events.map(\.registration) == [first, second])
        // The server ended the listen itself: nothing to stop.
        #expect(tree.takeListenChanges().isEmpty)
        #expect(tree.applyServerOverwrite(path: a, node: try node("1")).isEmpty)
    }

    @Test func cancellingTheDefaultListenLeavesTheFilteredQueriesThereAndListensForThem() throws {
        var tree = SyncTree()
        let a = try Path("a")
        let query = lastOne(1)
        _ = tree.addListen(path: a, query: .all, registration: first)
        _ = tree.addListen(path: a, query: query, registration: second)
        #expect(tree.takeListenChanges() == [.start(ServerListen(path: a, query: .all, tag: nil))])
        let events = tree.cancelListen(path: a, query: .all)
        #expect(events.map(\.kind) == [.cancelled])
        #expect(events.map(\.registration) == [first])
        // The default listen served the filtered query too: it gets a listen of its own.
        #expect(tree.takeListenChanges() == [.start(ServerListen(path: a, query: query, tag: 1))])
        let tagged = tree.applyServerOverwrite(path: a, node: try node(#"{"x":1,"y":2}"#), tag: 1)
        #expect(tagged.map(\.registration) == [second, second])
    }

    @Test func theListenHashIsTheHashOfTheCachedServerData() throws {
        var tree = SyncTree()
        let a = try Path("a")
        _ = tree.addListen(path: a, query: .all, registration: first)
        let listen = ServerListen(path: a, query: .all, tag: nil)
        #expect(tree.serverCacheHash(for: listen) == "")
        let data = try node(#"{"x":1}"#)
        _ = tree.applyServerOverwrite(path: a, node: data)
        #expect(tree.serverCacheHash(for: listen) == data.hash)
    }

    @Test func aRegistrationAddedTwiceIsRemovedOnceAtATime() throws {
        var tree = SyncTree()
        let a = try Path("a")
        _ = tree.addListen(path: a, query: .all, registration: first)
        _ = tree.addListen(path: a, query: .all, registration: first)
        _ = tree.removeListen(path: a, registration: first)
        #expect(tree.applyServerOverwrite(path: a, node: try node("1")).count == 1)
        _ = tree.removeListen(path: a, registration: first)
        #expect(tree.applyServerOverwrite(path: a, node: try node("2")).isEmpty)
    }
}
