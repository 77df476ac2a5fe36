import Testing

@testable import KindlingCore

/// Long random sequences of sets, updates, removals and server values, applied both to the tree
/// and to a plain dictionary model of the Firebase rules; after every step the two must agree.
struct TreeModelPropertyTests {
    /// A dictionary key that is equal only to the same bytes (Swift's `String ==` is not).
    struct ByteKey: Hashable {
        let bytes: [UInt8]
        init(_ string: String) { bytes = Array(string.utf8) }
        var string: String { String(decoding: bytes, as: UTF8.self) }
    }

    /// The model: plain recursive dictionaries, where "no value" is simply a missing entry.
    indirect enum Model: Equatable {
        case leaf(Leaf)
        case object([ByteKey: Model])

        /// Firebase's reading of client JSON: nulls and empty objects vanish, arrays are objects.
        static func from(_ json: JSONValue) -> Model? {
            switch json {
            case .null: return nil
            case .bool(let b): return .leaf(.bool(b))
            case .number(let n): return .leaf(.number(n))
            case .string(let s): return .leaf(.string(s))
            case .array(let elements):
                return object(elements.enumerated().map { (String($0.offset), $0.element) })
            case .object(let members):
                return object(members.map { ($0.key, $0.value) })
            }
        }

        static func object(_ pairs: [(String, JSONValue)]) -> Model? {
            var children: [ByteKey: Model] = [:]
            for (key, value) in pairs { children[ByteKey(key)] = from(value) }
            return children.isEmpty ? nil : .object(children)
        }

        /// The model with `value` at `path`, pruning parents left empty.
        static func setting(_ root: Model?, _ path: [String], _ value: Model?) -> Model? {
            guard let key = path.first else { return value }
            var children: [ByteKey: Model] = [:]
            if case .object(let existing)? = root { children = existing }
            if root != nil, case .leaf? = root, value == nil { return root }
            children[ByteKey(key)] = setting(children[ByteKey(key)], Array(path.dropFirst()), value)
            return children.isEmpty ? nil : .object(children)
        }

        static func get(_ root: Model?, _ path: [String]) -> Model? {
            guard let key = path.first else { return root }
            guard case .object(let children)? = root else { return nil }
            return get(children[ByteKey(key)], Array(path.dropFirst()))
        }

        /// JSON text with keys in Firebase order, the form the tree's export writes.
        static func text(_ model: Model?) -> String {
            guard let model else { return "null" }
            switch model {
            case .leaf(let leaf): return JSONWriter.string(leaf.json)
            case .object(let children):
                let keys = children.keys.map { Key(stringLiteral: $0.string) }.sorted()
                return "{"
                    + keys.map { JSONWriter.string(.string($0.string)) + ":" + text(children[ByteKey($0.string)]) }
                    .joined(separator: ",") + "}"
            }
        }
    }

    static let keyPool = ["a", "b", "c", "0", "1", "2", "10", "é", "e\u{301}", "😀", "\u{FFFF}", "-1", "x y"]

    struct Fuzzer {
        var random: SeededGenerator

        mutating func key() -> String { TreeModelPropertyTests.keyPool.randomElement(using: &random)! }

        mutating func path(maxDepth: Int = 3) -> [String] {
            (0..<Int.random(in: 0...maxDepth, using: &random)).map { _ in key() }
        }

        mutating func value(depth: Int = 0) -> JSONValue {
            switch Int.random(in: 0..<(depth > 2 ? 5 : 9), using: &random) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &random))
            case 2: return .number(Double(Int.random(in: -100...100, using: &random)))
            case 3: return .number(Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF) * (Bool.random(using: &random) ? 1 : -1))
            case 4: return .string(key())
            case 5, 6:
                return .object((0..<Int.random(in: 0...3, using: &random)).map { _ in JSONMember(key(), value(depth: depth + 1)) })
            case 7: return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in value(depth: depth + 1) })
            default: return .object([])
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func treeAgreesWithTheModel(seed: UInt64) throws {
        var fuzz = Fuzzer(random: SeededGenerator(seed: seed))
        var tree = DataTree()
        var model: Model?
        var snapshots: [(Node, String)] = []
        for step in 0..<2500 {
            let clock = ServerValues(timestamp: Double(1_700_000_000_000 + step))
            let path = fuzz.path()
            let target = try Path(path.joined(separator: "/"))
            switch Int.random(in: 0..<10, using: &fuzz.random) {
            case 0...3:
                let value = fuzz.value()
                tree.apply(try tree.resolveSet(target, value, serverValues: clock))
                model = Model.setting(model, path, Model.from(value))
            case 4...5:
                var members: [JSONMember] = []
                var relatives: [[String]] = []
                for _ in 0..<Int.random(in: 1...4, using: &fuzz.random) {
                    let relative = [fuzz.key()] + fuzz.path(maxDepth: 1)
                    if relatives.contains(where: { $0.starts(with: relative) || relative.starts(with: $0) }) { continue }
                    relatives.append(relative)
                    members.append(JSONMember(relative.joined(separator: "/"), fuzz.value()))
                }
                tree.apply(try tree.resolveUpdate(target, members, serverValues: clock))
                for (relative, member) in zip(relatives, members) {
                    model = Model.setting(model, path + relative, Model.from(member.value))
                }
            case 6:
                tree.apply(try tree.resolveSet(target, .null, serverValues: clock))
                model = Model.setting(model, path, nil)
            case 7...8:
                let delta = Double(Int.random(in: -5...5, using: &fuzz.random))
                let increment = JSONValue.object([JSONMember(".sv", .object([JSONMember("increment", .number(delta))]))])
                tree.apply(try tree.resolveSet(target, increment, serverValues: clock))
                var result = delta
                if case .leaf(.number(let current))? = Model.get(model, path) { result = current + delta }
                model = Model.setting(model, path, .leaf(.number(result)))
            default:
                let stamp = JSONValue.object([JSONMember("at", .object([JSONMember(".sv", .string("timestamp"))]))])
                tree.apply(try tree.resolveSet(target, stamp, serverValues: clock))
                model = Model.setting(model, path, .object([ByteKey("at"): .leaf(.number(clock.timestamp))]))
            }
            let expected = Model.text(model)
            #expect(tree.root.jsonText(format: .export) == expected, "step \(step)")
            if tree.root.jsonText(format: .export) != expected { return }
            if step % 250 == 0 { snapshots.append((tree.root, expected)) }
        }
        for (snapshot, text) in snapshots { #expect(snapshot.jsonText(format: .export) == text) }
        // Hashes of equal trees agree however they were built.
        #expect(try Node(jsonText: tree.root.jsonText(format: .export)).hash == tree.root.hash)
    }
}
