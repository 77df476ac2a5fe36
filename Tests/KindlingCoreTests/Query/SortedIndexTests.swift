import Testing

@testable import KindlingCore

/// A kept index must answer every window exactly as a full scan and sort does, however the data
/// changed underneath it.
struct SortedIndexTests {
    @Test(arguments: [Index.value, .priority, .child(try! Path("s")), .child(try! Path("s/t"))])
    func indexWindowsEqualScans(index: Index) throws {
        var random = SeededGenerator(seed: 21)
        var store = IndexStore()
        var tree = DataTree()
        let location = try Path("items")
        store.retain(index, at: location, data: tree.node(at: location))
        let clock = ServerValues(timestamp: 0)
        func value() -> JSONValue {
            switch Int.random(in: 0..<7, using: &random) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &random))
            case 2, 3: return .number(Double(Int.random(in: -5...5, using: &random)))
            case 4: return .string(["a", "b", "c"].randomElement(using: &random)!)
            case 5: return .object([JSONMember("t", .number(Double(Int.random(in: 0...3, using: &random))))])
            default: return .object([JSONMember("z", .bool(true))])
            }
        }
        for step in 0..<1500 {
            let key = "k\(Int.random(in: 0..<60, using: &random))"
            let write: Write
            switch Int.random(in: 0..<5, using: &random) {
            case 0: write = try tree.resolveSet(location, .object([JSONMember(key, .object([JSONMember("s", value())]))]), serverValues: clock)
            case 1:
                write = try tree.resolveSet(
                    Path("items/\(key)/.priority"), [JSONValue.null, .number(1), .string("p")].randomElement(using: &random)!, serverValues: clock)
            case 2:
                write = try tree.resolveUpdate(location, [JSONMember("\(key)/s", value()), JSONMember("x\(step % 3)", value())], serverValues: clock)
            default: write = try tree.resolveSet(Path("items/\(key)/s"), value(), serverValues: clock)
            }
            let old = tree.root
            tree.apply(write)
            store.apply(write, old: old, new: tree.root)
            let data = tree.node(at: location)
            #expect(store.entryCount == (store.index(index, at: location)?.count ?? 0), "step \(step)")
            for _ in 0..<3 {
                let query = randomQuery(index, &random)
                let fromIndex = store.window(query, at: location, data: data).map(\.key.string)
                let fromScan = query.window(of: data).map(\.key.string)
                let naive = naiveWindow(query, of: data)
                #expect(fromIndex == fromScan, "step \(step) \(query)")
                #expect(fromScan == naive, "step \(step) \(query)")
                let inKeyOrder = data.children.map(\.key.string).filter(Set(naive).contains)
                #expect(query.result(of: data).children.map(\.key.string) == inKeyOrder, "step \(step) \(query)")
                #expect(store.result(query, at: location, data: data).children.map(\.key.string) == inKeyOrder, "step \(step) \(query)")
                if fromIndex != fromScan || fromScan != naive { return }
            }
        }
    }

    /// The window by definition: every child in range, all sorted by the order, then the limit.
    func naiveWindow(_ query: Query, of data: Node) -> [String] {
        let sorted = data.children.filter { query.matches($0.key, $0.node) }.sorted { query.index.compare($0, $1) < 0 }.map(\.key.string)
        guard let limit = query.limit else { return sorted }
        return limit.fromEnd ? Array(sorted.suffix(limit.count)) : Array(sorted.prefix(limit.count))
    }

    func randomQuery(_ index: Index, _ random: inout SeededGenerator) -> Query {
        func bound(_ random: inout SeededGenerator) -> QueryBound {
            let values: [Node] = [.empty, Node(.bool(false)), Node(.bool(true)), Node(.number(0)), Node(.number(2)), Node(.string("b"))]
            let names: [BoundName] = [.min, .max, .key("k10"), .key("k5")]
            return QueryBound(
                value: values.randomElement(using: &random)!, name: names.randomElement(using: &random)!, inclusive: Bool.random(using: &random))
        }
        var query = Query(index: index)
        if Bool.random(using: &random) { query.start = bound(&random) }
        if Bool.random(using: &random) { query.end = bound(&random) }
        if Bool.random(using: &random) {
            query.limit = QueryLimit(count: Int.random(in: 0...40, using: &random), fromEnd: Bool.random(using: &random))
        }
        return query
    }

    /// Limits near the number of children (past the heap's reach) sort and cut: the same window
    /// as by definition, from either end, with ties and every type of value.
    @Test func largeLimitsGiveTheSameWindows() throws {
        var random = SeededGenerator(seed: 5)
        var members: [JSONMember] = []
        for index in 0..<3000 {
            let value: JSONValue
            switch Int.random(in: 0..<5, using: &random) {
            case 0: value = .bool(Bool.random(using: &random))
            case 1, 2: value = .number(Double(Int.random(in: -20...20, using: &random)))
            case 3: value = .string(["a", "b", "é", "😀", "ｚ"].randomElement(using: &random)!)
            default: value = .object([JSONMember("z", .number(1))])
            }
            members.append(JSONMember("k\(index)", .object([JSONMember("s", value)])))
        }
        let data = try Node(json: .object(members))
        for count in [1025, 2000, 2999, 3000, 5000] {
            for fromEnd in [false, true] {
                for index in [Index.child(try Path("s")), .value] {
                    var query = Query(index: index, limit: QueryLimit(count: count, fromEnd: fromEnd))
                    #expect(query.window(of: data).map(\.key.string) == naiveWindow(query, of: data), "\(count) \(fromEnd) \(index)")
                    query.start = QueryBound(value: Node(.number(0)), name: .min)
                    #expect(query.window(of: data).map(\.key.string) == naiveWindow(query, of: data), "\(count) \(fromEnd) \(index) from 0")
                }
            }
        }
    }

    /// An index built for a query must fit the entry budget and the per-location cap; a declared
    /// one is always built, and a released one gives its entries back.
    @Test func queryIndexesFitABudget() throws {
        let data = try Node(jsonText: #"{"a":{"x":1,"y":2},"b":{"x":2,"y":1},"c":{"x":3,"y":0}}"#)
        let location = try Path("items")
        var store = IndexStore(maxEntries: 5)
        #expect(store.retain(.child(try Path("x")), at: location, data: data))
        #expect(store.entryCount == 3)
        #expect(!store.retain(.child(try Path("y")), at: location, data: data), "3 + 3 entries are past 5")
        #expect(store.index(.child(try Path("y")), at: location) == nil)
        #expect(store.retain(.child(try Path("x")), at: location, data: data), "an index kept already costs nothing more")
        #expect(store.retain(.child(try Path("y")), at: location, data: data, declared: true))
        #expect(store.entryCount == 6)
        store.release(.child(try Path("y")), at: location)
        store.release(.child(try Path("x")), at: location)
        #expect(store.entryCount == 3)
        store.release(.child(try Path("x")), at: location)
        #expect(store.entryCount == 0)
        #expect(store.retain(.child(try Path("y")), at: location, data: data))

        var wide = IndexStore()
        for order in 0..<IndexStore.maxQueryIndexesPerLocation {
            #expect(wide.retain(.child(try Path("k\(order)")), at: location, data: data))
        }
        #expect(!wide.retain(.child(try Path("one-more")), at: location, data: data))
        #expect(wide.retain(.child(try Path("one-more")), at: try Path("elsewhere"), data: data))
        let keyOrder = wide.retain(.key, at: location, data: data)
        #expect(keyOrder, "the key order needs no index")
    }

    @Test func keyWindowsUseRanks() throws {
        let node = try Node(jsonText: #"{"a":1,"b":2,"c":3,"d":4,"10":0}"#)
        let query = try Query(wire: JSONParser.parse(#"{"sp":"b","sin":false,"ep":"d","ein":true,"l":5,"vf":"l","i":".key"}"#))
        #expect(query.window(of: node).map(\.key.string) == ["c", "d"])
        let last = try Query(wire: JSONParser.parse(#"{"l":2,"vf":"r","i":".key"}"#))
        #expect(last.window(of: node).map(\.key.string) == ["c", "d"])
    }
}
