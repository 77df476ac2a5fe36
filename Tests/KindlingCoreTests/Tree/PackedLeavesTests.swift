import Testing

@testable import KindlingCore

/// Packed parents (a few leaves in one allocation) against the ordinary form of the same data:
/// every read, hash and encoding agrees; a write below one unpacks it and leaves copies alone;
/// snapshots and JSON writes pack exactly the parents that qualify.
struct PackedLeavesTests {
    static let keyPool: [Key] = ["a", "b", "0", "1", "2", "10", "-1", "007", "é", "e\u{301}", "😀", "x y", "longer-than-eight-bytes", "online"]

    static func packed(_ node: Node) -> PackedLeaves? {
        if case .packed(let packed) = node.representation { return packed }
        return nil
    }

    /// The ordinary (B+tree) form of a parent, which `Node(children:)` would pack.
    static func ordinary(_ entries: [(Key, Node)]) -> Node {
        var map = ChildMap()
        for (key, node) in entries { map.set(key, node) }
        return Node(map: map, priority: nil)
    }

    func encode(_ node: Node) throws -> [UInt8] {
        try SnapshotBytes.encode(node)
    }

    func decode(_ bytes: [UInt8], step: Int = .max) throws -> Node {
        try SnapshotBytes.decode(bytes, step: step, chunkSize: 1024)
    }

    func expectAlike(_ packed: Node, _ ordinary: Node, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(packed == ordinary, sourceLocation: sourceLocation)
        #expect(ordinary == packed, sourceLocation: sourceLocation)
        #expect(packed.jsonText() == ordinary.jsonText(), sourceLocation: sourceLocation)
        #expect(packed.jsonText(format: .export) == ordinary.jsonText(format: .export), sourceLocation: sourceLocation)
        for variant in HashVariant.allCases {
            #expect(packed.hash(variant) == ordinary.hash(variant), sourceLocation: sourceLocation)
        }
        #expect(packed.matchesHash(ordinary.hash), sourceLocation: sourceLocation)
        #expect(packed.childCount == ordinary.childCount, sourceLocation: sourceLocation)
        #expect(
            packed.children.map { Array($0.key.string.utf8) } == ordinary.children.map { Array($0.key.string.utf8) }, sourceLocation: sourceLocation)
        #expect(packed.children.map(\.node) == ordinary.children.map(\.node), sourceLocation: sourceLocation)
        for key in Self.keyPool + [Key.priority, "absent"] {
            #expect(packed.child(key) == ordinary.child(key), sourceLocation: sourceLocation)
        }
        #expect(try encode(packed) == encode(ordinary), sourceLocation: sourceLocation)
    }

    @Test func packedAndOrdinaryParentsReadAlike() throws {
        var fuzzer = SnapshotCodecTests.TreeFuzzer(random: SeededGenerator(seed: 21))
        var packedCount = 0
        for _ in 0..<600 {
            let count = Int.random(in: 1...PackedLeaves.maxCount, using: &fuzzer.random)
            let ordinary = Self.ordinary((0..<count).map { _ in (Self.keyPool.randomElement(using: &fuzzer.random)!, Node(fuzzer.leaf())) })
            guard let packed = PackedLeaves.pack(ordinary.children) else {
                // Only too many bytes rule these out (at most 16 leaves without priorities).
                #expect(try encode(ordinary).count > PackedLeaves.maxBytes)
                continue
            }
            packedCount += 1
            let node = Node(representation: .packed(packed))
            try expectAlike(node, ordinary)
            // One value changed, or a priority added, makes them differ.
            let (key, child) = ordinary.children.entry(at: Int.random(in: 0..<ordinary.childCount, using: &fuzzer.random))
            let changed = ordinary.settingChild(key, child == Node(.bool(true)) ? Node(.bool(false)) : Node(.bool(true)))
            #expect(node != changed)
            #expect(node != Node(representation: .packed(PackedLeaves.pack(changed.children)!)))
            #expect(node != ordinary.withPriority(.number(1)))
        }
        #expect(packedCount > 400)
        #expect(PackedLeaves.pack((0...PackedLeaves.maxCount).map { (Key(stringLiteral: "k\($0)"), Node(.bool(true))) }) == nil)
        #expect(PackedLeaves.pack([(Key("a"), Node(.string(String(repeating: "x", count: PackedLeaves.maxBytes))))]) == nil)
        #expect(PackedLeaves.pack([(Key("a"), Node(.bool(true), priority: .number(1)))]) == nil)
        #expect(PackedLeaves.pack([(Key("a"), Node(children: [(Key("b"), Node(.bool(true)))]))]) == nil)
    }

    @Test func writingBelowAPackedParentUnpacksItAndLeavesCopiesAlone() throws {
        let user = try Node(jsonText: #"{"name":"User number 123","email":"user123@example.com","score":123,"online":true}"#)
        #expect(Self.packed(user) != nil)
        var edited = user
        edited.set(Node(.bool(false)), at: try Path("online"))
        #expect(Self.packed(edited) != nil)
        edited.set(Node(.bool(false)), at: try Path("online/deeper"))
        #expect(Self.packed(edited) == nil)
        edited.set(Node(.bool(false)), at: try Path("online"))
        #expect(user.child("online") == Node(.bool(true)))
        #expect(edited.child("online") == Node(.bool(false)))
        #expect(edited.child("email") == user.child("email"))
        edited.set(try Node(jsonText: #"{"city":"Oslo"}"#), at: try Path("address"))
        #expect(edited.child(at: try Path("address/city")) == Node(.string("Oslo")))
        #expect(user.childCount == 4)

        let prioritized = user.withPriority(.string("p"))
        #expect(prioritized.priority == .string("p"))
        #expect(prioritized.children.map(\.node) == user.children.map(\.node))
        #expect(prioritized.jsonText(format: .export).hasSuffix(#",".priority":"p"}"#))
        #expect(user.withPriority(nil) == user)
        #expect(user.setting(Node(.number(5)), at: try Path(".priority")).priority == .number(5))

        // A record written one field at a time is packed from its first field on.
        var fresh = Node.empty
        fresh.set(Node(.string("Ada")), at: try Path("users/ada/name"))
        fresh.set(Node(.number(3)), at: try Path("users/ada/score"))
        #expect(Self.packed(fresh.child(at: try Path("users/ada"))) != nil)
        #expect(Self.packed(fresh.child("users")) == nil)
        #expect(fresh.jsonText() == #"{"users":{"ada":{"name":"Ada","score":3}}}"#)
        var prioritizedLeaf = Node(.bool(true), priority: .number(1))
        prioritizedLeaf.set(Node(.bool(false)), at: try Path("flag"))
        #expect(Self.packed(prioritizedLeaf) == nil)
        #expect(prioritizedLeaf.priority == .number(1))

        var emptied = user
        for key in user.children.map(\.key) { emptied.set(.empty, at: Path(keys: [key])) }
        #expect(emptied.isEmpty)
        #expect(user.childCount == 4)
    }

    /// Random writes to a packed record and to the same record as an ordinary parent agree
    /// after every step; setting and removing fields keeps the record packed while it fits (a
    /// nested or prioritised write unpacks it for good).
    @Test func writesToAPackedRecordMatchAnOrdinaryOne() throws {
        var fuzzer = SnapshotCodecTests.TreeFuzzer(random: SeededGenerator(seed: 33))
        var stayedPacked = 0
        for _ in 0..<200 {
            var packed = try Node(jsonText: #"{"name":"User number 1","email":"user1@example.com","score":1,"online":true}"#)
            var ordinary = Node(map: packed.children, priority: nil)
            var snapshots: [(Node, Node)] = []
            for _ in 0..<12 {
                let key = Self.keyPool.randomElement(using: &fuzzer.random)!
                let path: Path
                let value: Node
                switch Int.random(in: 0..<10, using: &fuzzer.random) {
                case 0: (path, value) = (Path(keys: [key]), .empty)
                case 1: (path, value) = (Path(keys: [key, "deep"]), Node(.bool(true)))
                case 2: (path, value) = (Path(keys: [key]), Node(fuzzer.leaf(), priority: .number(2)))
                case 3: (path, value) = (Path(keys: [Key.priority]), Node(.string("p")))
                case 4:
                    (path, value) = (Path(keys: [key]), Node(.string(String(repeating: "z", count: Int.random(in: 0..<700, using: &fuzzer.random)))))
                default: (path, value) = (Path(keys: [key]), Node(fuzzer.leaf()))
                }
                snapshots.append((packed, ordinary))
                packed.set(value, at: path)
                ordinary.set(value, at: path)
                #expect(packed == ordinary)
                #expect(packed.hash == ordinary.hash)
                #expect(packed.jsonText(format: .export) == ordinary.jsonText(format: .export))
                if Self.packed(packed) != nil { stayedPacked += 1 }
            }
            // Earlier copies never see later writes.
            for (before, model) in snapshots {
                #expect(before == model)
            }
        }
        #expect(stayedPacked > 300)
    }

    @Test func jsonWritesPackSmallLeafObjectsOnly() throws {
        #expect(Self.packed(try Node(jsonText: #"{"b":1,"a":"x","c":null}"#)) != nil)
        #expect(Self.packed(try Node(jsonText: #"{"a":1,".priority":2}"#)) == nil)
        #expect(Self.packed(try Node(jsonText: #"{"a":{"b":1}}"#)) == nil)
        #expect(Self.packed(try Node(jsonText: #"{"a":{".value":1,".priority":2}}"#)) == nil)
        // Keys out of order (as clients send them) are sorted first; a repeated key keeps its
        // last value.
        let unsorted = try Node(jsonText: #"{"b":1,"a":2,"b":3}"#)
        #expect(Self.packed(unsorted) != nil)
        #expect(unsorted.jsonText() == #"{"a":2,"b":3}"#)
        // An array of leaves reads back as an array.
        let list = try Node(jsonText: #"{"0":"x","1":"y","2":"z"}"#)
        #expect(Self.packed(list) != nil)
        #expect(list.jsonText() == #"["x","y","z"]"#)
        #expect(try Node(jsonText: #"{"0":"x","2":"z"}"#).jsonText() == #"["x",null,"z"]"#)
        #expect(try Node(jsonText: #"{"0":"x","9":"z"}"#).jsonText() == #"{"0":"x","9":"z"}"#)
    }

    /// Records of up to 16 members in any order, keys repeated: each reads back sorted by key,
    /// with the last value of a repeated key, whether it is packed or not.
    @Test func membersInAnyOrderAreSortedAndTheLastRepeatWins() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let count = Int.random(in: 1...18, using: &generator)
            let members = (0..<count).map { index in (String(UnicodeScalar(UInt8.random(in: 97...104, using: &generator))), index) }
            var last: [String: Int] = [:]
            for (key, value) in members { last[key] = value }
            let text = "{" + members.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",") + "}"
            let expected = "{" + last.keys.sorted().map { #""\#($0)":\#(last[$0]!)"# }.joined(separator: ",") + "}"
            #expect(try Node(jsonText: text).jsonText() == expected, "\(text)")
        }
    }

    @Test func snapshotsLoadTheParentsThatQualifyPacked() throws {
        let user = try Node(jsonText: #"{"name":"Ådne Ødegård","email":"a@example.com","score":-0.5,"online":false}"#)
        let wide = Node(children: (0...PackedLeaves.maxCount).map { (Key(stringLiteral: "k\($0)"), Node(.number(Double($0)))) })
        let big = Node(children: (0..<3).map { (Key(stringLiteral: "s\($0)"), Node(.string(String(repeating: "x", count: 400)))) })
        func nested(at position: Int) -> Node {
            Node(
                children: (0..<4).map { index in
                    (
                        Key(stringLiteral: "f\(index)"),
                        index == position ? Node(children: [(Key("deep"), Node(.bool(true)))]) : Node(.number(Double(index)))
                    )
                })
        }
        let withPriorityChild = Node(children: [(Key("a"), Node(.bool(true))), (Key("b"), Node(.number(1), priority: .number(3)))])
        let tree = Node(children: [
            (Key("user"), user), (Key("wide"), wide), (Key("big"), big), (Key("first"), nested(at: 0)),
            (Key("middle"), nested(at: 2)), (Key("last"), nested(at: 3)), (Key("prioritized"), user.withPriority(.number(1))),
            (Key("priorityChild"), withPriorityChild),
        ])
        let bytes = try encode(tree)
        for step in [Int.max, 1, 5] {
            let decoded = try decode(bytes, step: step)
            #expect(decoded == tree)
            #expect(decoded.hash == tree.hash)
            #expect(decoded.jsonText(format: .export) == tree.jsonText(format: .export))
            #expect(Self.packed(decoded.child("user")) != nil)
            #expect(Self.packed(decoded.child(at: try Path("first/f0"))) != nil)
            for name in ["wide", "big", "first", "middle", "last", "prioritized", "priorityChild"] {
                #expect(Self.packed(decoded.child(Key(stringLiteral: name))) == nil, "\(name)")
            }
            try expectAlike(decoded.child("user"), Node(map: user.children, priority: nil))
            // Written back, the snapshot is the same bytes.
            #expect(try encode(decoded) == bytes)
        }
    }

    @Test func keysAndTextInAnyScriptLoadPackedAndInvalidUTF8IsRepairedAsBefore() throws {
        let record = Self.ordinary([(Key("名前"), Node(.string("ダイビング 😀"))), (Key("Ødegård"), Node(.number(2))), (Key("a"), Node(.bool(true)))])
        let decoded = try decode(try encode(record), step: 3)
        #expect(Self.packed(decoded) != nil)
        try expectAlike(decoded, record)
        // Bytes that are not UTF-8, in a key and in a string, read as the replacement character,
        // as version 1 snapshots always did.
        let header = SnapshotFormat.magic + [SnapshotFormat.version]
        let invalid = try decode(header + [6, 2, 1, UInt8(ascii: "z"), 5, 2, 0xFF, UInt8(ascii: "x"), 2, 0xC3, 0x28, 1])
        let repairedKey = Key(stringLiteral: String(decoding: [0xC3, 0x28] as [UInt8], as: UTF8.self))
        #expect(invalid.child(repairedKey) == Node(.bool(false)))
        #expect(invalid.child("z") == Node(.string(String(decoding: [0xFF, UInt8(ascii: "x")] as [UInt8], as: UTF8.self))))
    }

    /// Parents right around the packed size limit load back the same, packed or not, and a
    /// packed one never holds more than the limit.
    @Test func parentsAtTheSizeLimitLoadBackTheSame() throws {
        for length in (PackedLeaves.maxBytes - 40)...(PackedLeaves.maxBytes + 4) {
            let text = String(repeating: "x", count: length - 20)
            let samples = [
                Node(children: [(Key("a"), Node(.string(String(repeating: "y", count: length))))]),
                Node(children: [(Key("a"), Node(.number(1.5))), (Key("b"), Node(.string(text))), (Key("c"), Node(.number(-7)))]),
                Node(children: [(Key("a"), Node(.string(text))), (Key("b"), Node(.number(0.25))), (Key("c"), Node(.bool(true)))]),
                Node(children: [(Key("a"), Node(.string(text + "é"))), (Key(stringLiteral: String(repeating: "k", count: 30)), Node(.number(3)))]),
            ]
            for sample in samples {
                let decoded = try decode(try encode(sample), step: 7)
                #expect(decoded == sample)
                #expect(decoded.hash == sample.hash)
                if let packed = Self.packed(decoded) { #expect(packed.bytes.count <= PackedLeaves.maxBytes) }
            }
        }
    }

    @Test func theHashIsCachedOnceWhenManyThreadsAskAtOnce() async throws {
        let user = try Node(jsonText: #"{"name":"User number 123","score":1.5}"#)
        let expected = Node(map: user.children, priority: nil).hash
        let hashes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { user.hash } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(hashes == Array(repeating: expected, count: 8))
        #expect(Self.packed(user)?.cachedHash?.digest.base64 == expected)
    }
}
