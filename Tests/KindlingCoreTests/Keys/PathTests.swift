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
}
