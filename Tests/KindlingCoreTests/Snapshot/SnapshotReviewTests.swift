import Testing

@testable import KindlingCore

/// Review tests for snapshot format 2: the packing reader against the ordinary reader on the
/// same (possibly damaged) entries, version 1 rules, and error offsets with a scheduler.
struct SnapshotReviewTests {
    final class InlineScheduler: SnapshotBlockScheduler {
        var pending: [SnapshotBlock] = []
        func submit(_ block: SnapshotBlock) throws { pending.append(block) }
        func finish() -> [Result<SnapshotBlock.Decoded, any Error>] {
            defer { pending = [] }
            return pending.map { block in Result { try block.decode() } }
        }
    }

    static let header = SnapshotFormat.magic + [SnapshotFormat.version]

    func decode(_ bytes: [UInt8], scheduler: (any SnapshotBlockScheduler)? = nil, step: Int = .max) throws -> Node {
        try SnapshotBytes.decode(bytes, scheduler: scheduler, step: step, chunkSize: 1024)
    }

    enum Outcome: Equatable {
        case node(Node)
        case failure(offset: Int, reason: String)
    }

    func outcome(_ bytes: [UInt8], scheduler: (any SnapshotBlockScheduler)? = nil, step: Int = .max) -> Outcome {
        do {
            return .node(try decode(bytes, scheduler: scheduler, step: step))
        } catch let error as SnapshotDecodingError {
            return .failure(offset: error.offset, reason: error.reason)
        } catch {
            return .failure(offset: -1, reason: "\(error)")
        }
    }

    static func randomEntries(_ random: inout SeededGenerator) -> (count: Int, bytes: [UInt8]) {
        let keys = ["a", "b", "c", "0", "1", "7", "10", "007", "-1", "é", "ü", "😀", "k", "long-key-name", "z"]
        let count = Int.random(in: 1...PackedLeaves.maxCount, using: &random)
        var chosen = Set<String>()
        while chosen.count < min(count, keys.count) { chosen.insert(keys.randomElement(using: &random)!) }
        let sorted = chosen.map { Key(stringLiteral: $0) }.sorted { Key.compare($0, $1) < 0 }
        var bytes: [UInt8] = []
        for key in sorted {
            SnapshotFormat.appendBytes(key.string, to: &bytes)
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                // A nested parent.
                bytes += [SnapshotFormat.Tag.children.rawValue, 1]
                SnapshotFormat.appendBytes("x", to: &bytes)
                SnapshotFormat.appendLeaf(.bool(true), to: &bytes)
            case 1:
                // A prioritised leaf.
                bytes += [SnapshotFormat.Tag.trueValue.rawValue | SnapshotFormat.priorityFlag, SnapshotFormat.Tag.integer.rawValue, 4]
            case 2:
                SnapshotFormat.appendLeaf(.string(String(repeating: "q", count: Int.random(in: 100...700, using: &random))), to: &bytes)
            case 3:
                // A number written with tag 3 though integral.
                bytes.append(SnapshotFormat.Tag.number.rawValue)
                withUnsafeBytes(of: (5.0).bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            case 4:
                SnapshotFormat.appendLeaf(.string("ñ\u{301}x"), to: &bytes)
            default:
                SnapshotFormat.appendLeaf(.number(Double(Int.random(in: -1000...1000, using: &random)) / 4), to: &bytes)
            }
        }
        return (sorted.count, bytes)
    }

    /// The same entries of a small parent, damaged at random, read through the packing reader
    /// (tag 6, no priority) and through the ordinary one (tag 6 with a priority, and tag 7):
    /// the same nodes or the same refusal at the same place.
    @Test func packingReaderAgreesWithTheOrdinaryReaderOnDamagedEntries() {
        var random = SeededGenerator(seed: 99)
        var disagreements: [String] = []
        var failures = 0
        for round in 0..<3000 {
            let (count, clean) = Self.randomEntries(&random)
            var entries = clean
            let mutations = Int.random(in: 0...2, using: &random)
            for _ in 0..<mutations {
                let index = Int.random(in: 0..<entries.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: entries[index] = UInt8.random(in: 0...255, using: &random)
                case 1: entries[index] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                case 2: entries.remove(at: index)
                default: entries.insert(UInt8.random(in: 0...255, using: &random), at: index)
                }
            }
            if entries.isEmpty { continue }
            var countBytes: [UInt8] = []
            SnapshotFormat.appendVarint(UInt64(count), to: &countBytes)
            let plain = Self.header + [SnapshotFormat.Tag.children.rawValue] + countBytes + entries
            let priorityBytes: [UInt8] = [SnapshotFormat.Tag.integer.rawValue, 2]
            let prioritized =
                Self.header + [SnapshotFormat.Tag.children.rawValue | SnapshotFormat.priorityFlag] + priorityBytes + countBytes + entries
            var blockLength: [UInt8] = []
            SnapshotFormat.appendVarint(UInt64(countBytes.count + entries.count), to: &blockLength)
            let blocked = Self.header + [SnapshotFormat.Tag.blocks.rawValue] + countBytes + blockLength + countBytes + entries + [0]
            let step = [Int.max, 1, 3, 7].randomElement(using: &random)!
            let a = outcome(plain, step: step)
            let b = outcome(prioritized, step: step)
            let c = outcome(blocked, step: step)
            switch (a, b) {
            case let (.node(x), .node(y)):
                let y = y.withPriority(nil)
                if x != y || x.hash != y.hash || x.jsonText(format: .export) != y.jsonText(format: .export) {
                    disagreements.append("round \(round): nodes differ \(x.jsonText(format: .export)) vs \(y.jsonText(format: .export))")
                }
            case let (.failure(o1, r1), .failure(o2, r2)):
                failures += 1
                if o1 + priorityBytes.count != o2 || r1 != r2 {
                    disagreements.append("round \(round): plain fails at \(o1) (\(r1)), prioritised at \(o2) (\(r2)) \(entries)")
                }
            default:
                disagreements.append("round \(round): plain \(a) vs prioritised \(b) \(entries)")
            }
            if case .node(let x) = a, case .node(let z) = c, x != z {
                disagreements.append("round \(round): plain and blocked nodes differ")
            }
            if case .node = a, case .failure(let o, let r) = c {
                // A damaged block may fail only on its own length check.
                if !r.contains("block") { disagreements.append("round \(round): blocked fails at \(o) (\(r)), plain reads") }
            }
        }
        #expect(failures > 100)
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, first: \(disagreements.prefix(5))")
    }

    /// Version 1 had no tag 7: a version-1 snapshot that holds one is not a version-1 snapshot.
    @Test func versionOneRefusesBlocks() throws {
        var bytes = SnapshotFormat.magic + [1, SnapshotFormat.Tag.blocks.rawValue, 1]
        var entry: [UInt8] = []
        SnapshotFormat.appendBytes("a", to: &entry)
        SnapshotFormat.appendLeaf(.bool(true), to: &entry)
        bytes += [UInt8(1 + entry.count), 1] + entry + [0]
        // Sanity: as version 2 it reads.
        var v2 = bytes
        v2[SnapshotFormat.magic.count] = 2
        #expect(try decode(v2).child("a") == Node(.bool(true)))
        #expect(throws: SnapshotDecodingError.self) { try decode(bytes) }
    }

    /// A damaged snapshot is refused at the same place, with the same reason, whether its
    /// blocks are decoded in the stream or by a scheduler.
    @Test func errorsAreTheSameWithAScheduler() {
        var bad: [UInt8] = []
        SnapshotFormat.appendBytes("a$", to: &bad)  // a forbidden character
        SnapshotFormat.appendLeaf(.bool(true), to: &bad)
        var good: [UInt8] = []
        SnapshotFormat.appendBytes("b", to: &good)
        SnapshotFormat.appendLeaf(.bool(true), to: &good)
        // Block one holds the bad key; block two declares more children than the parent has.
        var bytes = Self.header + [SnapshotFormat.Tag.blocks.rawValue, 2]
        bytes += [UInt8(1 + bad.count), 1] + bad
        bytes += [UInt8(1 + good.count), 5] + good + [0]
        let inline = outcome(bytes)
        let scheduled = outcome(bytes, scheduler: InlineScheduler())
        #expect(inline == scheduled, "inline \(inline), scheduled \(scheduled)")
    }
}
