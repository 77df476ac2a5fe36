import KindlingCore
import Testing

@testable import kindling

/// `ImportChunker`: applying its steps in order, as `kindling import` sends them, leaves exactly
/// the document, however small the steps; each step is bounded; bad input is refused at its byte.
struct ImportChunkerTests {
    /// The steps for `text` with steps of `chunkBytes`, fed in pieces of `piece` bytes.
    private static func steps(_ text: String, chunkBytes: Int, piece: Int = 7, depthLimit: Int = Path.maxDepth) throws -> [ImportChunker.Step] {
        var reader = JSONStreamReader()
        var chunker = ImportChunker(chunkBytes: chunkBytes, depthLimit: depthLimit)
        var steps: [ImportChunker.Step] = []
        let bytes = Array(text.utf8)
        func drain() throws {
            do {
                while let token = try reader.next() {
                    if let step = try chunker.take(token) { steps.append(step) }
                }
            } catch let error as JSONStreamError {
                throw ImportError.json(error)
            }
        }
        for from in stride(from: 0, to: bytes.count, by: piece) {
            reader.feed(Array(bytes[from..<min(bytes.count, from + piece)]))
            try drain()
        }
        reader.finish()
        try drain()
        if let last = chunker.finish(end: bytes.count) { steps.append(last) }
        return steps
    }

    /// The tree the steps leave, applied as the server applies the requests, under `existing`.
    private static func applied(_ steps: [ImportChunker.Step], over existing: String = #"{"old":{"data":1}}"#) throws -> DataTree {
        var tree = DataTree(root: try Node(jsonText: existing))
        let values = ServerValues(timestamp: 0)
        for (index, step) in steps.enumerated() {
            let request = step.request(first: index == 0)
            let path = Path(keys: try request.path.map { try Key($0) })
            if request.method == "PUT" {
                tree.apply(try tree.resolveSet(path, request.body, serverValues: values))
            } else {
                guard case .object(let members) = request.body else { throw ImportError.invalidData(offset: 0, "not an object") }
                tree.apply(try tree.resolveUpdate(path, members, serverValues: values))
            }
        }
        return tree
    }

    private static func expected(_ text: String) throws -> String {
        try Node(json: JSONParser.parse(text)).jsonText(format: .export)
    }

    private static let document = #"""
        {"users": {"ada": {"name": "Ada", "born": 1815, "langs": ["en", "fr", null, "it"]},
                   "bob": {".priority": 3, "name": "Bob", "tags": {"a": true, "b": {".value": 2, ".priority": "p"}}}},
         "rooms": [{"title": "one"}, {"title": "two", "members": {"ada": true}}],
         "count": 12.5, "empty": {}, "nothing": null, ".priority": 1}
        """#

    @Test func anyStepSizeLeavesExactlyTheDocument() throws {
        let expected = try Self.expected(Self.document)
        for chunkBytes in [1, 2, 5, 10, 20, 40, 80, 160, 400, 1 << 20] {
            let steps = try Self.steps(Self.document, chunkBytes: chunkBytes)
            #expect(try Self.applied(steps).root.jsonText(format: .export) == expected, "steps of \(chunkBytes)")
            if chunkBytes == 1 << 20 { #expect(steps.count == 1) }
            if chunkBytes <= 5 { #expect(steps.count > 5) }
            // Each step holds its own values, in the order of the text.
            #expect(steps.map(\.end) == steps.map(\.end).sorted())
        }
    }

    @Test func randomDocumentsSurviveRandomCuts() throws {
        var generator = SeededGenerator(seed: 391)
        for _ in 0..<150 {
            let json = JSONValue.object([JSONMember("root", Self.random(depth: 0, &generator))])
            let text = JSONWriter.string(json)
            let chunkBytes = Int.random(in: 1...64, using: &generator)
            let steps = try Self.steps(text, chunkBytes: chunkBytes, piece: Int.random(in: 1...50, using: &generator))
            #expect(try Self.applied(steps).root.jsonText(format: .export) == (try Self.expected(text)), "\(text) in steps of \(chunkBytes)")
        }
    }

    @Test func stepsStayNearTheirSize() throws {
        let members = (0..<2000).map { #""k\#($0)": {"a": "\#(String(repeating: "x", count: 40))", "b": \#($0)}"# }
        let text = "{\"list\": {" + members.joined(separator: ",") + "}}"
        let steps = try Self.steps(text, chunkBytes: 4096, piece: 1000)
        #expect(steps.count > 20)
        for step in steps.dropLast() { #expect(step.bytes >= 4096 && step.bytes < 4096 + 100) }
        let second = steps[1].request(first: false)
        #expect(second.method == "PATCH" && second.path == ["list"])
        #expect(try Self.applied(steps).root.jsonText(format: .export) == (try Self.expected(text)))
    }

    @Test func aPrimitiveOrEmptyDocumentIsOnePut() throws {
        for text in ["12", #""text""#, "null", "{}", "[]", "true"] {
            let steps = try Self.steps(text, chunkBytes: 1)
            #expect(steps.count == 1)
            #expect(steps.first?.request(first: true).method == "PUT")
            #expect(try Self.applied(steps).root.jsonText(format: .export) == (try Self.expected(text)))
        }
    }

    @Test func badInputIsRefusedAtItsByte() throws {
        do {
            _ = try Self.steps(#"{"ok": 1, "a/b": 2}"#, chunkBytes: 1)
            Issue.record("an invalid key was taken")
        } catch let ImportError.invalidKey(offset, error) {
            #expect(offset == 10 && error.kind == .invalidKey)
        }
        #expect(throws: ImportError.invalidData(offset: 8, "\".value\" beside other children")) {
            try Self.steps(#"{"a":1, ".value": 2}"#, chunkBytes: 100)
        }
        #expect(throws: ImportError.tooDeep(offset: 11, limit: 2)) {
            try Self.steps(#"{"a":{"b":{"c":1}}}"#, chunkBytes: 100, depthLimit: 2)
        }
        #expect(throws: ImportError.tooDeep(offset: 11, limit: 2)) {
            try Self.steps(#"{"a":{"b":[1]}}"#, chunkBytes: 100, depthLimit: 2)
        }
        let truncated = #"{"a": {"b": 1}, "c": [1, 2"#
        do {
            _ = try Self.steps(truncated, chunkBytes: 4)
            Issue.record("a truncated document was taken")
        } catch let ImportError.json(error) {
            #expect(error.kind == .truncated && error.offset == truncated.utf8.count)
        }
    }

    private static func random(depth: Int, _ generator: inout SeededGenerator) -> JSONValue {
        let names = ["a", "b", "0", "1", "10", "z-z", "é"]
        switch Int.random(in: 0..<(depth > 4 ? 4 : 8), using: &generator) {
        case 0: return .null
        case 1: return .number(Double(Int.random(in: -100...100, using: &generator)))
        case 2: return .string(String(repeating: "s", count: Int.random(in: 0...20, using: &generator)))
        case 3: return .object([JSONMember(".value", .bool(true)), JSONMember(".priority", .number(2))])
        case 4: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in random(depth: depth + 1, &generator) })
        default:
            var members = names.shuffled(using: &generator).prefix(Int.random(in: 0...5, using: &generator)).map {
                JSONMember($0, random(depth: depth + 1, &generator))
            }
            if Bool.random(using: &generator) { members.insert(JSONMember(".priority", .string("p")), at: 0) }
            return .object(members)
        }
    }
}
