import Testing

@testable import KindlingCore
@testable import KindlingSync

/// The building blocks of the sync tree: path trees, compound writes, pending writes, filters.
struct SyncPartsTests {
    func node(_ json: String) throws -> Node { try Node(jsonText: json) }

    @Test func pathTreesPruneEmptyBranchesAndFindTheHighestValue() throws {
        var tree = OrderedPathTree<Int>()
        tree.set(1, at: try Path("a/b/c"))
        tree.set(2, at: try Path("a"))
        #expect(tree.rootmostValue(on: try Path("a/b/c/d"))?.value == 2)
        #expect(tree.rootmostValue(on: try Path("a/b/c/d"))?.path == (try Path("a")))
        tree.removeValue(at: try Path("a/b/c"))
        #expect(tree.subtree(at: try Path("a")).children.isEmpty)
        tree.removeValue(at: try Path("a"))
        #expect(tree.isEmpty)
    }

    @Test func pathTreesVisitChildrenBeforeParents() throws {
        var tree = OrderedPathTree<String>()
        for text in ["", "b", "a", "a/x", "10", "9"] { tree.set(text, at: try Path(text)) }
        var visited: [String] = []
        tree.forEach { _, value in visited.append(value) }
        #expect(visited == ["10", "9", "a/x", "a", "b", ""])
    }

    @Test func compoundWritesFoldDeeperWritesIntoTheWriteAbove() throws {
        let writes = CompoundWrite.empty
            .adding(try node(#"{"x":1}"#), at: try Path("a"))
            .adding(try node("2"), at: try Path("a/y"))
        #expect(writes.completeNode(at: try Path("a")) == (try node(#"{"x":1,"y":2}"#)))
        #expect(writes.completeNode(at: try Path("a/x")) == (try node("1")))
        #expect(writes.completeNode(at: .root) == nil)
        #expect(writes.removing(at: try Path("a")).isEmpty)
    }

    @Test func compoundWritesApplyAPriorityOnlyToExistingData() throws {
        let priority = CompoundWrite.empty.adding(try node("7"), at: try Path("a/.priority"))
        #expect(priority.apply(to: .empty).isEmpty)
        let applied = priority.apply(to: try node(#"{"a":1}"#))
        #expect(applied.child("a").priority == .number(7))
    }

    @Test func removingAWriteCoveredByALaterOneChangesNothingVisible() throws {
        var writes = WriteTree()
        writes.addOverwrite(try node("1"), at: try Path("a/b"), writeID: 0, visible: true)
        writes.addOverwrite(try node("2"), at: try Path("a"), writeID: 1, visible: true)
        #expect(writes.removeWrite(0) == false)
        #expect(writes.shadowingWrite(at: try Path("a")) == (try node("2")))
        #expect(writes.removeWrite(1) == true)
        #expect(writes.visibleWrites.isEmpty)
        #expect(writes.removeWrite(7) == false)
    }

    @Test func aFullWindowLetsTheNextChildInWhenOneLeaves() throws {
        let query = Query(limit: QueryLimit(count: 2, fromEnd: false))
        let filter = LimitedFilter(query: query, limit: QueryLimit(count: 2, fromEnd: false))
        let complete = try node(#"{"a":1,"b":2,"c":3}"#)
        let writes = WriteTreeRef(WriteTree(), at: .root)
        let cache = ViewCache(
            eventCache: CacheNode(try node(#"{"a":1,"b":2}"#), fullyInitialized: true, filtered: true),
            serverCache: CacheNode(complete, fullyInitialized: true, filtered: false))
        var changes: ChildChangeAccumulator? = ChildChangeAccumulator()
        let result = filter.updateChild(
            cache.eventCache.node, key: "a", newChild: .empty, affectedPath: .root,
            source: .writes(writes, cache, completeServerCache: nil), changes: &changes)
        #expect(result == (try node(#"{"b":2,"c":3}"#)))
        #expect(changes?.result.map(\.kind) == [.childRemoved, .childAdded])
    }

    @Test func changesToOneChildNetOut() {
        var changes = ChildChangeAccumulator()
        changes.track(.removed("a", Node(.number(1))))
        changes.track(.added("a", Node(.number(2))))
        changes.track(.added("b", Node(.number(3))))
        changes.track(.removed("b", Node(.number(3))))
        let result = changes.result
        #expect(result.count == 1)
        #expect(result.first?.kind == .childChanged)
        #expect(result.first?.oldNode == Node(.number(1)))
    }

    @Test func previousSiblingsFollowTheIndex() throws {
        let data = try node(#"{"a":{"n":3},"b":{"n":1},"c":{"n":2}}"#)
        let index = Index.child(try Path("n"))
        #expect(data.predecessor(of: "a", data.child("a"), by: index) == "c")
        #expect(data.predecessor(of: "b", data.child("b"), by: index) == nil)
        #expect(data.predecessor(of: "c", data.child("c"), by: .key) == "b")
        let order = ChildOrder(index: index, node: data)
        #expect(order.keys == ["b", "c", "a"])
        #expect(order.predecessor(of: "a", data.child("a"), in: data) == "c")
        #expect(order.predecessor(of: "b", data.child("b"), in: data) == nil)
    }

    @Test func childOrdersFollowChangesAndRepairThemselves() throws {
        let index = Index.child(try Path("n"))
        let old = try node(#"{"a":{"n":3},"b":{"n":1}}"#)
        let new = try node(#"{"a":{"n":0},"c":{"n":2}}"#)
        var order = ChildOrder(index: index, node: old)
        let changes: [ChildChange] = [
            .removed("b", old.child("b")), .added("c", new.child("c")), .changed("a", new.child("a"), old: old.child("a")),
        ]
        order.update(with: changes, node: new)
        #expect(order.keys == ["a", "c"])
        #expect(order.repairs == 0)
        // Changes that do not describe the data: the order is rebuilt from the data.
        order.update(with: [.removed("zz", Node(.number(1)))], node: old)
        #expect(order.keys == ["b", "a"])
        #expect(order.repairs == 1)
    }
}
