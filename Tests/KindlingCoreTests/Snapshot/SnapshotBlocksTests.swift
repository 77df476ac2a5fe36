import Testing

@testable import KindlingCore

/// Big parents written in blocks (`SnapshotFormat`, tag 7): read back the same whether the
/// blocks are decoded in the stream or handed to a scheduler, and every damaged block is refused.
struct SnapshotBlocksTests {
    /// Decodes each block when the parent is finished, in reverse order, to show that results
    /// are joined by position, not by when they were decoded.
    final class ReversingScheduler: SnapshotBlockScheduler {
        var pending: [SnapshotBlock] = []
        var submittedCount = 0

        func submit(_ block: SnapshotBlock) throws {
            pending.append(block)
            submittedCount += 1
        }

        func finish() -> [Result<SnapshotBlock.Decoded, any Error>] {
            defer { pending = [] }
            return pending.reversed().map { block in Result { try block.decode() } }.reversed()
        }
    }

    func encode(_ node: Node) throws -> [UInt8] {
        try SnapshotBytes.encode(node, chunkSize: 4096)
    }

    func decode(_ bytes: [UInt8], scheduler: (any SnapshotBlockScheduler)? = nil, step: Int = .max) throws -> Node {
        try SnapshotBytes.decode(bytes, scheduler: scheduler, step: step, chunkSize: 4096)
    }

    static let header = SnapshotFormat.magic + [SnapshotFormat.version]

    /// A parent in blocks, written by hand: each block is `(entries, bytes of its entries)`.
    static func blocked(total: Int, _ blocks: [(count: Int, entries: [UInt8])], lengthDelta: Int = 0) -> [UInt8] {
        var bytes = header + [SnapshotFormat.Tag.blocks.rawValue]
        SnapshotFormat.appendVarint(UInt64(total), to: &bytes)
        for block in blocks {
            var counted: [UInt8] = []
            SnapshotFormat.appendVarint(UInt64(block.count), to: &counted)
            SnapshotFormat.appendVarint(UInt64(counted.count + block.entries.count + lengthDelta), to: &bytes)
            bytes += counted + block.entries
        }
        return bytes + [0]
    }

    static func entry(_ key: String, _ value: Double) -> [UInt8] {
        var bytes: [UInt8] = []
        SnapshotFormat.appendBytes(key, to: &bytes)
        SnapshotFormat.appendLeaf(.number(value), to: &bytes)
        return bytes
    }

    @Test func bigParentsReadBackTheSameWithOrWithoutAScheduler() throws {
        let users = Node(
            children: (0..<30_000).map { index in
                (
                    Key(stringLiteral: "user\(index)"),
                    Node(children: [(Key("name"), Node(.string("User number \(index)"))), (Key("score"), Node(.number(Double(index))))])
                )
            })
        // A big parent inside another's block is decoded where that block is.
        let nested = Node(
            children: (0..<2).map { outer in
                (
                    Key(stringLiteral: "group\(outer)"),
                    Node(children: (0..<(SnapshotFormat.blockThreshold + 7)).map { (Key(stringLiteral: "k\($0)"), Node(.bool($0 % 2 == 0))) })
                )
            })
        let wideOfBig = Node(
            children: (0..<(SnapshotFormat.blockThreshold + 1)).map { index in
                (Key(stringLiteral: "w\(index)"), index == 3 ? nested : Node(.number(Double(index))))
            })
        let tree = Node(children: [(Key("users"), users), (Key("wide"), wideOfBig), (Key("small"), Node(.bool(true)))])
        let bytes = try encode(tree)
        #expect(bytes.contains(SnapshotFormat.Tag.blocks.rawValue))
        let scheduler = ReversingScheduler()
        let scheduled = try decode(bytes, scheduler: scheduler)
        #expect(scheduler.submittedCount > 2)
        for decoded in [scheduled, try decode(bytes), try decode(bytes, scheduler: ReversingScheduler(), step: 777)] {
            #expect(decoded == tree)
            #expect(decoded.hash == tree.hash)
            #expect(decoded.child("users").childCount == 30_000)
            #expect(decoded.child(at: try Path("users/user12345/name")) == Node(.string("User number 12345")))
            #expect(decoded.child("users").children.rank(of: "user2") == tree.child("users").children.rank(of: "user2"))
        }
        // Written back, the same bytes.
        #expect(try encode(scheduled) == bytes)
        // Changing a loaded big parent works as on any map.
        var edited = scheduled
        edited.set(.empty, at: try Path("users/user0"))
        edited.set(Node(.bool(true)), at: try Path("users/zzz"))
        #expect(edited.child("users").childCount == 30_000)
        #expect(edited.child("users").children.last?.key == "zzz")
    }

    @Test func damagedBlocksAreRefused() throws {
        let ab = Self.entry("a", 1) + Self.entry("b", 2)
        // Blocks that are not whole pages (no encoder writes them) still join correctly.
        let uneven = Self.blocked(total: 4, [(2, ab), (1, Self.entry("c", 3)), (1, Self.entry("d", 4))])
        let expected = Node(children: ["a", "b", "c", "d"].enumerated().map { (Key(stringLiteral: $1), Node(.number(Double($0 + 1)))) })
        #expect(try decode(uneven) == expected)
        #expect(try decode(uneven, scheduler: ReversingScheduler()) == expected)
        #expect(try decode(uneven, scheduler: ReversingScheduler()).children.map(\.key) == ["a", "b", "c", "d"])
        let samples: [[UInt8]] = [
            // Keys out of order across blocks, and within one.
            Self.blocked(total: 2, [(1, Self.entry("b", 1)), (1, Self.entry("a", 2))]),
            Self.blocked(total: 2, [(2, Self.entry("b", 1) + Self.entry("a", 2))]),
            // A block longer or shorter than its children.
            Self.blocked(total: 2, [(2, ab)], lengthDelta: 1),
            Self.blocked(total: 2, [(2, ab)], lengthDelta: -1),
            Self.blocked(total: 2, [(2, ab + [0])]),
            // More or fewer children than the parent declares, or a block of none.
            Self.blocked(total: 1, [(2, ab)]),
            Self.blocked(total: 3, [(2, ab)]),
            Self.blocked(total: 2, [(0, []), (2, ab)]),
            Self.blocked(total: 0, []),
            // A priority on children in blocks, and a stream that ends inside a block.
            Self.header + [SnapshotFormat.Tag.blocks.rawValue | SnapshotFormat.priorityFlag, 4, 1, 2, 1, 1, UInt8(ascii: "a"), 2, 0],
            Array(Self.blocked(total: 2, [(2, ab)]).dropLast(3)),
        ]
        for (index, sample) in samples.enumerated() {
            #expect(throws: SnapshotDecodingError.self, "sample \(index)") { try decode(sample) }
            #expect(throws: SnapshotDecodingError.self, "sample \(index), scheduled") { try decode(sample, scheduler: ReversingScheduler()) }
        }
        // The error names the offset in the whole snapshot, also from a block decoded apart.
        let outOfOrder = Self.blocked(total: 3, [(2, ab), (1, Self.entry("a", 3))])
        var offsets: [Int] = []
        for scheduler in [nil, ReversingScheduler()] as [ReversingScheduler?] {
            do {
                _ = try decode(outOfOrder, scheduler: scheduler)
            } catch let error as SnapshotDecodingError {
                offsets.append(error.offset)
            }
        }
        #expect(offsets.count == 2)
        #expect(offsets.allSatisfy { $0 > Self.header.count })
    }

    @Test func versionOneSnapshotsStillRead() throws {
        var bytes = try encode(Node(children: [(Key("a"), Node(.string("x"))), (Key("b"), Node(.number(2), priority: .string("p")))]))
        bytes[SnapshotFormat.magic.count] = 1
        let decoded = try decode(bytes)
        #expect(decoded.child("a") == Node(.string("x")))
        #expect(decoded.child("b").priority == .string("p"))
        bytes[SnapshotFormat.magic.count] = SnapshotFormat.version + 1
        #expect(throws: SnapshotDecodingError.self) { try decode(bytes) }
    }
}
