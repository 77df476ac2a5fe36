import Testing

@testable import KindlingCore

struct OrderedMapTests {
    /// Random inserts and removals against a sorted array, across page splits and merges, with
    /// snapshots taken along the way that must never change.
    @Test func matchesASortedArrayModel() {
        var generator = SeededGenerator(seed: 5)
        var map = ChildMap()
        var model: [(Key, Double)] = []
        var snapshots: [(ChildMap, [(Key, Double)])] = []
        for step in 0..<30_000 {
            let key = Key(stringLiteral: "k\(Int.random(in: 0..<3000, using: &generator))")
            let position = model.firstIndex { Key.compare($0.0, key) >= 0 } ?? model.count
            let present = position < model.count && model[position].0 == key
            if Int.random(in: 0..<3, using: &generator) == 0 {
                map.set(key, .empty)
                if present { model.remove(at: position) }
            } else {
                let value = Double(step)
                map.set(key, Node(.number(value)))
                if present { model[position].1 = value } else { model.insert((key, value), at: position) }
            }
            if step % 5000 == 0 { snapshots.append((map, model)) }
        }
        check(map, model)
        for (snapshot, expected) in snapshots { check(snapshot, expected) }
        for (key, _) in model { map.set(key, .empty) }
        #expect(map.isEmpty)
        #expect(map.root == nil)
    }

    func check(_ map: ChildMap, _ model: [(Key, Double)]) {
        #expect(map.count == model.count)
        #expect(Array(map).map(\.key) == model.map(\.0))
        #expect(Array(map).map { $0.node.leaf } == model.map { .number($0.1) })
        for (rank, (key, value)) in model.enumerated() where rank % 97 == 0 {
            #expect(map[key]?.leaf == .number(value))
            #expect(map.rank(of: key) == rank)
            #expect(map.entry(at: rank).key == key)
        }
        #expect(map[Key(stringLiteral: "absent")] == nil)
    }

    @Test(arguments: [0, 1, 47, 48, 49, 3000, 10_000])
    func bulkBuildingMatchesInserting(count: Int) {
        let entries = (0..<count).map { (key: Key(stringLiteral: "k\($0)"), node: Node(.number(Double($0)))) }
            .sorted { Key.compare($0.key, $1.key) < 0 }
        var inserted = ChildMap()
        for entry in entries { inserted.set(entry.key, entry.node) }
        var built = ChildMap(sortedEntries: entries)
        #expect(Array(built).map(\.key) == Array(inserted).map(\.key))
        #expect(built.count == count)
        for rank in stride(from: 0, to: count, by: 97) {
            #expect(built.entry(at: rank).key == entries[rank].key)
            #expect(built.rank(of: entries[rank].key) == rank)
        }
        // A built map takes later inserts and removals like any other.
        built.set("zzz", Node(.bool(true)))
        built.set(entries.first?.key ?? "a", .empty)
        #expect(built.count == max(count, 1))
    }

    @Test func firstAndLastFollowKeyOrder() {
        var map = ChildMap()
        for key in ["b", "10", "a", "2"] { map.set(Key(stringLiteral: key), Node(.bool(true))) }
        #expect(map.first?.key == "2")
        #expect(map.last?.key == "b")
        #expect(map.rank(of: "aa") == 3)
    }

    /// Pages are sized to their entries and grow by moving into a bigger allocation: random
    /// operations on maps starting small (built or empty) and crossing one page's capacity, the
    /// split and the merge back, with a copy kept at every step that must not see later changes.
    @Test(arguments: [0, 1, 3, 4, 5, 47, 48, 49, 64, 65])
    func smallMapsGrowAndShrinkAcrossPageBoundaries(initialCount: Int) {
        var generator = SeededGenerator(seed: UInt64(initialCount) + 11)
        let pool = (0..<140).map { Key(stringLiteral: "k\($0)") }.sorted { Key.compare($0, $1) < 0 }
        var model = Array(pool.prefix(initialCount).enumerated().map { ($0.element, Double($0.offset)) })
        var map = ChildMap(sortedEntries: model.map { (key: $0.0, node: Node(.number($0.1))) })
        var previous = (map, model)
        for step in 0..<4000 {
            // Drift the size up, then down, so the map passes each boundary both ways.
            let growing = (step / 1000) % 2 == 0
            let key = pool[Int.random(in: 0..<pool.count, using: &generator)]
            let position = model.firstIndex { Key.compare($0.0, key) >= 0 } ?? model.count
            let present = position < model.count && model[position].0 == key
            if Int.random(in: 0..<4, using: &generator) == 0 ? growing : !growing {
                map.set(key, .empty)
                if present { model.remove(at: position) }
            } else {
                map.set(key, Node(.number(Double(step))))
                if present { model[position].1 = Double(step) } else { model.insert((key, Double(step)), at: position) }
            }
            if step % 7 == 0 { check(previous.0, previous.1) }
            previous = (map, model)
        }
        check(map, model)
    }
}
