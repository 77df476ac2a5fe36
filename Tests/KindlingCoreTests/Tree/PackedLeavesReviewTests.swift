import Testing

@testable import KindlingCore

/// Review tests: try to make packed parents and snapshot format 2 disagree with the ordinary
/// representation and with version 1 behaviour.
struct PackedLeavesReviewTests {
    static let keyPool: [String] = [
        "a", "b", "0", "1", "2", "9", "10", "-1", "-0", "00", "007", "7", "-007", "2147483647", "2147483648", "-2147483648",
        "-2147483649", "0000000000001", "01", "1a", "é", "e\u{301}", "😀", "\u{E000}", "\u{FFFF}", "x y", "-", "longer-than-eight-bytes",
        "longer-than-eight-bytez", "longer-t", "online", "~", "A", "Z", "_",
    ]
    static let numberPool: [Double] = [
        0, -0.0, 1, -1, 0.5, 1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 9_007_199_254_740_993,
        -9_223_372_036_854_775_808, 9_223_372_036_854_775_808, 9_223_372_036_854_774_784, 123_456_789, -4_503_599_627_370_495.5,
    ]

    static func packed(_ node: Node) -> PackedLeaves? {
        if case .packed(let packed) = node.representation { return packed }
        return nil
    }

    static func leaf(_ random: inout SeededGenerator) -> Leaf {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .bool(Bool.random(using: &random))
        case 1, 2: return .number(numberPool.randomElement(using: &random)!)
        case 3: return .string(keyPool.randomElement(using: &random)! + String(repeating: "ü", count: Int.random(in: 0..<3, using: &random)))
        default: return .string(String(repeating: "s", count: Int.random(in: 0..<300, using: &random)))
        }
    }

    func encode(_ node: Node) throws -> [UInt8] {
        try SnapshotBytes.encode(node, chunkSize: 1024)
    }

    func decode(_ bytes: [UInt8], scheduler: (any SnapshotBlockScheduler)? = nil, step: Int = .max) throws -> Node {
        try SnapshotBytes.decode(bytes, scheduler: scheduler, step: step, chunkSize: 1024)
    }

    func expectAlike(_ a: Node, _ b: Node, _ note: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(a == b, "\(note)", sourceLocation: sourceLocation)
        #expect(b == a, "\(note)", sourceLocation: sourceLocation)
        #expect(a.isEmpty == b.isEmpty, "\(note)", sourceLocation: sourceLocation)
        #expect(a.isLeaf == b.isLeaf, "\(note)", sourceLocation: sourceLocation)
        #expect(a.priority == b.priority, "\(note)", sourceLocation: sourceLocation)
        #expect(a.jsonText() == b.jsonText(), "\(note)", sourceLocation: sourceLocation)
        #expect(a.jsonText(format: .export) == b.jsonText(format: .export), "\(note)", sourceLocation: sourceLocation)
        for variant in HashVariant.allCases {
            #expect(a.hash(variant) == b.hash(variant), "\(note) \(variant)", sourceLocation: sourceLocation)
        }
        #expect(a.childCount == b.childCount, "\(note)", sourceLocation: sourceLocation)
        #expect(
            a.children.map { Array($0.key.string.utf8) } == b.children.map { Array($0.key.string.utf8) }, "\(note)", sourceLocation: sourceLocation)
        for key in Self.keyPool.map({ Key(stringLiteral: $0) }) + [Key.priority, "absent"] {
            #expect(a.child(key) == b.child(key), "\(note) \(key)", sourceLocation: sourceLocation)
            #expect(a.hasChild(key) == b.hasChild(key), "\(note) \(key)", sourceLocation: sourceLocation)
        }
        #expect(try encode(a) == encode(b), "\(note)", sourceLocation: sourceLocation)
    }

    /// Random records over tricky keys (integer-like, out of Int32, UTF-16 order edge cases)
    /// and tricky numbers, written through `set` both packed and ordinary.
    @Test func randomWritesOnTrickyKeysAgree() throws {
        var random = SeededGenerator(seed: 0xC0FFEE)
        var packedSteps = 0
        for round in 0..<120 {
            let count = Int.random(in: 1...PackedLeaves.maxCount, using: &random)
            var entries: [(Key, Node)] = []
            for _ in 0..<count { entries.append((Key(stringLiteral: Self.keyPool.randomElement(using: &random)!), Node(Self.leaf(&random)))) }
            var packed = Node(children: entries)
            var map = ChildMap()
            for (key, node) in entries { map.set(key, node) }
            var ordinary = Node(map: map, priority: nil)
            try expectAlike(packed, ordinary, "round \(round) start")
            for step in 0..<20 {
                let key = Key(stringLiteral: Self.keyPool.randomElement(using: &random)!)
                let path: Path
                let value: Node
                switch Int.random(in: 0..<12, using: &random) {
                case 0, 1: (path, value) = (Path(keys: [key]), .empty)
                case 2: (path, value) = (Path(keys: [key, "deep"]), Node(.bool(true)))
                case 3: (path, value) = (Path(keys: [key, Key.priority]), Node(.number(3)))
                case 4: (path, value) = (Path(keys: [Key.priority]), Node(.string("p")))
                case 5: (path, value) = (Path(keys: [Key.priority]), .empty)
                case 6: (path, value) = (Path(keys: [key]), Node(children: [(Key("x"), Node(.bool(true)))]))
                default: (path, value) = (Path(keys: [key]), Node(Self.leaf(&random)))
                }
                packed.set(value, at: path)
                ordinary.set(value, at: path)
                if Self.packed(packed) != nil { packedSteps += 1 }
                try expectAlike(packed, ordinary, "round \(round) step \(step) \(path)")
                // Round trip through a snapshot and through JSON.
                if !packed.isEmpty {
                    let decoded = try decode(try encode(packed), step: 3)
                    try expectAlike(decoded, ordinary, "round \(round) step \(step) snapshot")
                    let reparsed = try Node(jsonText: packed.jsonText(format: .export))
                    try expectAlike(reparsed, try Node(jsonText: ordinary.jsonText(format: .export)), "round \(round) step \(step) json")
                }
            }
        }
        #expect(packedSteps > 150)
    }

    /// Key order of raw bytes agrees with `Key.compare` on every pair of pool keys.
    @Test func compareUTF8AgreesWithKeyCompare() {
        for l in Self.keyPool {
            for r in Self.keyPool {
                var lt = l
                var rt = r
                let viaBytes = lt.withUTF8 { lb in rt.withUTF8 { rb in Key.compare(utf8: lb, rb) } }
                let viaKeys = Key.compare(Key(stringLiteral: l), Key(stringLiteral: r))
                #expect(viaBytes.signum() == viaKeys.signum(), "\(l) vs \(r)")
            }
        }
    }
}

extension PackedLeavesReviewTests {
    /// JSON objects with nulls, empty objects, repeated and unsorted keys parse to the same node
    /// as writing their members one by one into an ordinary parent.
    @Test func jsonObjectsAgreeWithMemberByMemberWrites() throws {
        var random = SeededGenerator(seed: 4242)
        let values = ["null", "{}", "1", "-0.0", "0", "\"x\"", "true", "{\"n\":1}", "{\".value\":3}", "{\".value\":null}", "[1,2]", "[]"]
        for round in 0..<2000 {
            let count = Int.random(in: 1...20, using: &random)
            var members: [(String, String)] = []
            for _ in 0..<count {
                members.append((Self.keyPool.randomElement(using: &random)!, values.randomElement(using: &random)!))
            }
            let text = "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
            let parsed = try Node(jsonText: text)
            var model = Node.empty
            for (key, value) in members {
                var map = ChildMap()
                for (k, n) in model.children { map.set(k, n) }
                map.set(Key(stringLiteral: key), try Node(jsonText: value))
                model = Node(map: map, priority: nil)
            }
            try expectAlike(parsed, model, "round \(round) \(text)")
        }
    }
}
