import Testing

@testable import KindlingCore

/// The rules' lazy new tree against the tree built whole: on random trees and random writes
/// (sets and merges at every depth, priorities, deletions), every location reads the same node,
/// and random rules that read `newData` at every level decide the same, trace for trace.
struct RuleNewTreeTests {
    static let names: [Key] = ["a", "b", "c", "1"]

    /// A random node `depth` levels deep at most: empty, a leaf, or children, some with priorities.
    static func node(_ depth: Int, _ random: inout SeededGenerator) -> Node {
        let priority: Priority? = Int.random(in: 0..<4, using: &random) == 0 ? .number(Double(Int.random(in: 0..<3, using: &random))) : nil
        switch Int.random(in: 0..<(depth > 0 ? 6 : 3), using: &random) {
        case 0: return .empty
        case 1: return Node(.number(Double(Int.random(in: 0..<4, using: &random))), priority: priority)
        case 2: return Node(.bool(Bool.random(using: &random)))
        default:
            let children = names.filter { _ in Bool.random(using: &random) }.map { ($0, node(depth - 1, &random)) }
            return Node(children: children, priority: priority)
        }
    }

    /// A random location `0...depth` keys deep, sometimes ending in `.priority`.
    static func path(_ depth: Int, _ random: inout SeededGenerator, priority: Bool = true) -> Path {
        var keys = (0..<Int.random(in: 0...depth, using: &random)).map { _ in names.randomElement(using: &random)! }
        if priority, !keys.isEmpty, Int.random(in: 0..<6, using: &random) == 0 { keys[keys.count - 1] = .priority }
        return Path(keys: keys)
    }

    /// A random set or merge; merge entries never overlap (as `resolveUpdate` makes them) and
    /// often outnumber `RuleNewTree.lazyEntryLimit`.
    static func write(_ random: inout SeededGenerator) -> Write {
        let base = path(3, &random, priority: false)
        if Bool.random(using: &random) { return .set(base, node(3, &random)) }
        var entries: [MergeEntry] = []
        for _ in 0..<Int.random(in: 1...(Bool.random(using: &random) ? 8 : 40), using: &random) {
            let relative = path(3, &random)
            guard !relative.isRoot, !entries.contains(where: { $0.path.contains(relative) || relative.contains($0.path) }) else { continue }
            let value = relative.last?.isPriority == true ? Node(.number(Double(Int.random(in: 0..<3, using: &random)))) : node(2, &random)
            entries.append(MergeEntry(path: relative, node: Bool.random(using: &random) ? value : .empty))
        }
        return .merge(base, entries)
    }

    /// Every location up to `depth` keys over the names and `.priority`.
    static func locations(_ depth: Int) -> [[Key]] {
        var all: [[Key]] = [[]]
        var level: [[Key]] = [[]]
        for _ in 0..<depth {
            level = level.flatMap { prefix in (names + [.priority]).map { prefix + [$0] } }
            all += level
        }
        return all
    }

    @Test func everyLocationReadsWhatTheBuiltTreeHolds() {
        var random = SeededGenerator(seed: 0x00C0_FFEE)
        let locations = RuleNewTreeTests.locations(4)
        var lazyMerges = 0
        var builtMerges = 0
        for _ in 0..<400 {
            let old = RuleNewTreeTests.node(5, &random)
            let write = RuleNewTreeTests.write(&random)
            if case .merge(_, let entries) = write {
                if entries.count > RuleNewTree.lazyEntryLimit { builtMerges += 1 } else { lazyMerges += 1 }
            }
            var built = DataTree(root: old)
            built.apply(write)
            let lazy = RuleNewTree(old: old, write: write)
            for keys in locations {
                let expected = built.root.child(at: Path(keys: keys))
                let given = lazy.node(at: keys, count: keys.count, old: old.child(at: Path(keys: keys)))
                let walked = lazy.node(at: keys, count: keys.count, old: nil)
                guard given == expected, walked == expected else {
                    Issue.record("at /\(keys.map(\.string).joined(separator: "/")) after \(write) on \(old): \(given) / \(walked), built \(expected)")
                    return
                }
            }
        }
        #expect(lazyMerges > 50 && builtMerges > 5)
    }

    static let expressions = [
        "newData.exists()",
        "!newData.exists() || newData.hasChildren()",
        "newData.val() != 2",
        "newData.parent().exists()",
        "newData.parent().child('b').val() != 3",
        "newData.child('a').exists() || data.exists()",
        "newData.child('a').parent().parent().exists() || !newData.exists()",
        "newData.getPriority() != 1",
        "newData.child('.priority').val() != 2",
        "newData.child('.priority/a').parent().val() != 1",
        "root.child('a').exists() || newData.parent().parent().hasChildren()",
        "newData.hasChildren(['a', 'b']) || newData.isNumber() || newData.isBoolean()",
        "data.val() == newData.val()",
    ]

    /// A random rules level `depth` deep: `.write`/`.validate` rules reading `newData` (or not),
    /// literal children and sometimes a wildcard.
    static func rules(_ depth: Int, _ random: inout SeededGenerator) -> String {
        var members: [String] = []
        switch Int.random(in: 0..<5, using: &random) {
        case 0: members.append(#"".write": true"#)
        case 1: members.append("\".write\": \"\(expressions.randomElement(using: &random)!)\"")
        default: break
        }
        if Int.random(in: 0..<3, using: &random) != 0 {
            members.append("\".validate\": \"\(expressions.randomElement(using: &random)!)\"")
        }
        if depth > 0 {
            for name in ["a", "b"] where Bool.random(using: &random) { members.append("\"\(name)\": \(rules(depth - 1, &random))") }
            if Bool.random(using: &random) { members.append("\"$w\(depth)\": \(rules(depth - 1, &random))") }
        }
        return "{" + members.joined(separator: ", ") + "}"
    }

    @Test func decisionsAgreeWithTheBuiltTreeTraceForTrace() throws {
        var random = SeededGenerator(seed: 0x0BAD_CAFE)
        var allowed = 0
        var denied = 0
        for _ in 0..<60 {
            let document = try RulesDocument.parse("{\"rules\": \(RuleNewTreeTests.rules(5, &random))}")
            for _ in 0..<20 {
                let old = RuleNewTreeTests.node(5, &random)
                let write = RuleNewTreeTests.write(&random)
                var built = DataTree(root: old)
                built.apply(write)
                for explain in [true, false] {
                    let lazy = document.canWrite(write, auth: .null, old: old, now: 0, explain: explain)
                    let eager = document.canWrite(write, auth: .null, old: old, new: RuleNewTree(built: built.root), now: 0, explain: explain)
                    #expect(lazy == eager, "\(write) on \(old) under \(document.source)")
                    if explain { if lazy.allowed { allowed += 1 } else { denied += 1 } }
                }
            }
        }
        #expect(allowed > 100 && denied > 100)
    }
}
