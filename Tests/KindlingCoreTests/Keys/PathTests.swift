import Testing

@testable import KindlingCore

struct PathTests {
    @Test func normalisesSlashes() throws {
        #expect(try Path("/a//b/") == Path("a/b"))
        #expect(try Path("") == .root)
        #expect(try Path("/") == .root)
        #expect(try Path("a/b").description == "/a/b")
        #expect(Path.root.description == "/")
    }

    /// Paths split on the byte `/`, as the SDKs split them: non-ASCII keys come through whole,
    /// and a `/` followed by a combining mark (one character, not equal to "/") still separates.
    @Test func splitsOnTheSlashByte() throws {
        #expect(try Path("caf\u{E9}/😀/e\u{301}").keys.map(\.string) == ["caf\u{E9}", "😀", "e\u{301}"])
        #expect(try Path("a/\u{301}b").keys.map(\.string) == ["a", "\u{301}b"])
    }

    @Test func invalidKeysNameThePath() {
        do {
            _ = try Path("users/a.b/c")
            Issue.record("accepted an invalid path")
        } catch {
            #expect(error.kind == .invalidKey)
            #expect(error.message.contains("users/a.b/c"))
            #expect(error.message.contains("\"a.b\""))
        }
    }

    /// A request reader parses its path from the message's bytes: the same keys, or the same
    /// refusal naming the whole path, as from the path's string.
    @Test(arguments: [
        "", "/", "users/u1/name", "/a//b/", "caf\u{E9}/😀", "a/.priority", "a/.priority/b", "users/a.b/c", "x/$y",
        "k/" + String(repeating: "z", count: 769),
    ])
    func parsesTheBytesAsTheString(text: String) {
        let fromString = Result { () throws(ValidationError) in try Path(text) }
        let fromBytes = Array(text.utf8).withUnsafeBufferPointer { bytes in Result { () throws(ValidationError) in try Path(utf8: bytes) } }
        #expect(fromBytes == fromString)
    }

    @Test func priorityOnlyLast() throws {
        #expect(try Path("a/.priority").last?.isPriority == true)
        #expect(throws: ValidationError.self) { try Path("a/.priority/b") }
    }

    @Test func depthLimit() throws {
        let deepest = (0..<Path.maxDepth).map { "k\($0)" }.joined(separator: "/")
        #expect(try Path(deepest).count == 32)
        #expect(throws: ValidationError.tooDeep(deepest + "/x")) { try Path(deepest + "/x") }
    }

    @Test func relations() throws {
        let a = try Path("a"), ab = try Path("a/b"), ac = try Path("a/c")
        #expect(a.contains(ab))
        #expect(!ab.contains(a))
        #expect(!ab.contains(ac))
        #expect(a.relative(ab) == (try Path("b")))
        #expect(ab.relative(ac) == nil)
        #expect(ab.parent == a)
        #expect(Path.root.parent == nil)
        #expect(a < ab && ab < ac)
    }

    /// Paths are read from their bytes in one pass; the result (keys, or the error and its
    /// message) must be what splitting the string and validating each key as a `String` gives.
    @Test func bytePathMatchesSplittingTheString() {
        let pieces = [
            "a", "b", "/", "//", ".", "$", "#", "[", "]", "\u{7F}", "\u{1}", ".priority", "priority", "0", "-12", "007",
            "2147483648", "caf\u{E9}", "e\u{301}", "\u{212A}", "😀", "\u{301}", String(repeating: "x", count: 769),
            String(repeating: "y", count: 768), String(repeating: "k/", count: 33),
        ]
        var random = SeededGenerator(seed: 16)
        for _ in 0..<4_000 {
            let text = (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let expected = PathTests.splittingTheString(text)
            do {
                let path = try Path(text)
                guard case .success(let names) = expected else {
                    Issue.record("accepted \(ValidationError.quoted(text)), which splitting refuses")
                    continue
                }
                #expect(path == Path(keys: names.map { $0 == ".priority" ? Key.priority : Key(unchecked: $0) }))
                #expect(path.keys.map(\.string) == names)
                #expect(path.keys.map(\.integerValue) == names.map { Key.parseInteger($0) })
            } catch {
                #expect(expected == .failure(error), "\(ValidationError.quoted(text))")
            }
        }
    }

    /// The path parser before it read bytes: the reference for `bytePathMatchesSplittingTheString`.
    private static func splittingTheString(_ text: String) -> Result<[String], ValidationError> {
        var names: [String] = []
        for segment in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let name = String(text[segment.startIndex..<segment.endIndex])
            if name.utf8.elementsEqual(".priority".utf8) {
                names.append(name)
                continue
            }
            do throws(ValidationError) {
                try Key.validate(name)
            } catch {
                return .failure(ValidationError(error.kind, "Invalid path \(ValidationError.quoted(text)): \(error.message)"))
            }
            names.append(name)
        }
        if let index = names.firstIndex(of: ".priority"), index != names.count - 1 {
            return .failure(ValidationError(.invalidPath, "Invalid path \(ValidationError.quoted(text)): \".priority\" may only be the last key"))
        }
        if names.count > Path.maxDepth { return .failure(.tooDeep(text)) }
        return .success(names)
    }
}
