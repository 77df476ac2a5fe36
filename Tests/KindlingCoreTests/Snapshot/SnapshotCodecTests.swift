import Testing

@testable import KindlingCore

/// The binary snapshot format: random trees read back identical (keys by their exact bytes,
/// numbers by their exact bits, priorities kept), through chunks of every size, and damaged
/// bytes are refused with an error rather than loaded.
struct SnapshotCodecTests {
    static let keyPool = [
        "a", "b", "0", "1", "2", "10", "-1", "007", "é", "e\u{301}", "😀", "\u{FFFF}", "x y", "longer-than-eight-bytes", "longer-than-eight-bytez",
    ]
    static let numberPool: [Double] = [
        0, -0.0, 1, -1, 0.1, 1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 9_007_199_254_740_992, 9_007_199_254_740_994,
        -9_223_372_036_854_775_808, 9_223_372_036_854_775_808, 4_503_599_627_370_495.5, 123_456_789,
    ]

    struct TreeFuzzer {
        var random: SeededGenerator

        mutating func leaf() -> Leaf {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return .bool(Bool.random(using: &random))
            case 1: return .number(SnapshotCodecTests.numberPool.randomElement(using: &random)!)
            case 2: return .number(Double(bitPattern: random.next() & ~(0x7FF << 52)))
            default:
                return .string(
                    SnapshotCodecTests.keyPool.randomElement(using: &random)! + String(repeating: "ü", count: Int.random(in: 0..<40, using: &random)))
            }
        }

        mutating func priority() -> Priority? {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return .number(SnapshotCodecTests.numberPool.randomElement(using: &random)!)
            case 1: return .string(SnapshotCodecTests.keyPool.randomElement(using: &random)!)
            default: return nil
            }
        }

        mutating func node(depth: Int) -> Node {
            if depth >= 4 || Int.random(in: 0..<3, using: &random) == 0 { return Node(leaf(), priority: priority()) }
            let children = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                (Key(stringLiteral: SnapshotCodecTests.keyPool.randomElement(using: &random)!), node(depth: depth + 1))
            }
            return Node(children: children, priority: priority())
        }
    }

    func encode(_ node: Node, chunkSize: Int = 1 << 20) throws -> [UInt8] {
        try SnapshotBytes.encode(node, chunkSize: chunkSize)
    }

    /// Decodes `bytes`, handing them over at most `step` at a time.
    func decode(_ bytes: [UInt8], step: Int = .max, chunkSize: Int = 1 << 20) throws -> Node {
        try SnapshotBytes.decode(bytes, step: step, chunkSize: chunkSize)
    }

    /// Deep equality that compares numbers by bits and keys and strings by bytes, child by child.
    func expectIdentical(_ a: Node, _ b: Node, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a == b, sourceLocation: sourceLocation)
        #expect(a.jsonText(format: .export) == b.jsonText(format: .export), sourceLocation: sourceLocation)
        #expect(a.hash == b.hash, sourceLocation: sourceLocation)
    }

    @Test func randomTreesRoundTrip() throws {
        var fuzzer = TreeFuzzer(random: SeededGenerator(seed: 6))
        for round in 0..<300 {
            let tree = fuzzer.node(depth: 0)
            let bytes = try encode(tree, chunkSize: round % 2 == 0 ? 16 : 1 << 20)
            expectIdentical(try decode(bytes), tree)
            expectIdentical(try decode(bytes, step: 1 + round % 7, chunkSize: 1024), tree)
        }
    }

    @Test func valuesKeepTheirExactBitsAndBytes() throws {
        for number in Self.numberPool {
            let decoded = try decode(try encode(Node(.number(number), priority: .number(number))))
            guard case .number(let value)? = decoded.leaf, case .number(let priority)? = decoded.priority else {
                Issue.record("not a number: \(decoded.jsonText(format: .export))")
                continue
            }
            #expect(value.bitPattern == number.bitPattern)
            #expect(priority.bitPattern == number.bitPattern)
        }
        // Canonically equivalent keys stay two different keys, in UTF-16 order.
        let keys: [Key] = ["é", "e\u{301}", "😀", "\u{FFFF}", "a"]
        let tree = Node(children: keys.map { ($0, Node(.string($0.string))) })
        let decoded = try decode(try encode(tree))
        #expect(decoded.children.map { Array($0.key.string.utf8) } == tree.children.map { Array($0.key.string.utf8) })
        #expect(decoded.childCount == 5)
        expectIdentical(decoded, tree)
        expectIdentical(try decode(try encode(.empty)), .empty)
    }

    @Test func largeChildCountsBuildBalancedMaps() throws {
        for count in [1, 47, 48, 49, 2_305, 150_000] {
            let tree = Node(children: (0..<count).map { (Key(stringLiteral: "k\($0)"), Node(.number(Double($0)))) })
            let decoded = try decode(try encode(tree), chunkSize: 4096)
            #expect(decoded.childCount == count)
            expectIdentical(decoded, tree)
            #expect(decoded.child(Key(stringLiteral: "k\(count / 2)")).leaf == .number(Double(count / 2)))
            var edited = decoded
            edited.set(.empty, at: try Path("k0"))
            edited.set(Node(.bool(true)), at: try Path("zz"))
            #expect(edited.childCount == count)
            #expect(edited.children.entry(at: count - 1).key == Key(stringLiteral: "zz"))
        }
    }

    @Test func damagedBytesAreRefused() throws {
        let tree = Node(children: [(Key("a"), Node(.string("hello"))), (Key("b"), Node(.number(1.5), priority: .string("p")))])
        let bytes = try encode(tree)
        // Every truncation is an error, never a smaller tree.
        for length in 0..<bytes.count {
            #expect(throws: SnapshotDecodingError.self) { try decode(Array(bytes[..<length])) }
        }
        #expect(throws: SnapshotDecodingError.self) { try decode(bytes + [0]) }
        var badMagic = bytes
        badMagic[0] = UInt8(ascii: "X")
        #expect(throws: SnapshotDecodingError.self) { try decode(badMagic) }
        var badVersion = bytes
        badVersion[8] = 99
        #expect(throws: SnapshotDecodingError.self) { try decode(badVersion) }
        // Keys out of order, a forbidden key, an unknown tag, a non-finite number.
        let header = SnapshotFormat.magic + [SnapshotFormat.version]
        let samples: [[UInt8]] = [
            header + [6, 2, 1, UInt8(ascii: "b"), 1, 1, UInt8(ascii: "a"), 1],
            header + [6, 2, 1, UInt8(ascii: "a"), 1, 1, UInt8(ascii: "a"), 1],
            header + [6, 1, 1, UInt8(ascii: "/"), 1],
            header + [6, 1, 0, 1],
            header + [6, 0],
            header + [6, 1, 1, UInt8(ascii: "a"), 0],
            header + [9],
            header + [3, 0, 0, 0, 0, 0, 0, 0xF0, 0x7F],
            header + [0x81, 1],
            header + Array(repeating: 0xFF, count: 12),
            // Child counts past what an `Int` holds (2^63, 2^64 - 1), plain and in blocks.
            header + [6] + Array(repeating: 0x80, count: 9) + [0x01, 1, UInt8(ascii: "a"), 1],
            header + [6] + Array(repeating: 0xFF, count: 9) + [0x01, 1, UInt8(ascii: "a"), 1],
            header + [SnapshotFormat.Tag.blocks.rawValue] + Array(repeating: 0x80, count: 9) + [0x01, 4, 1, 1, UInt8(ascii: "a"), 1, 0],
        ]
        for sample in samples {
            #expect(throws: SnapshotDecodingError.self) { try decode(sample) }
        }
        let tooDeep = (0...Path.maxDepth).reduce(Node(.bool(true))) { node, _ in Node(children: [(Key("a"), node)]) }
        #expect(throws: SnapshotDecodingError.self) { try decode(try encode(tooDeep)) }
    }
}
