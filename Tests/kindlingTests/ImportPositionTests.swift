import Foundation
import Testing

@testable import kindling

/// What a resumed import checks (the first bytes of its file, wherever the pieces end) and what
/// its progress line says.
struct ImportPositionTests {
    private static func digest(_ text: String, pieces: Int, checking position: ImportPosition? = nil) -> (PrefixDigest, Bool) {
        var digest = PrefixDigest(checking: position)
        let bytes = Array(text.utf8)
        var matched = true
        for start in stride(from: 0, to: bytes.count, by: pieces) {
            matched = matched && bytes[start..<min(bytes.count, start + pieces)].withUnsafeBytes { digest.add($0) }
        }
        return (digest, matched)
    }

    private static func position(after text: String) -> ImportPosition {
        let (digest, _) = Self.digest(text, pieces: 5)
        return ImportPosition(
            input: "f", server: "s", namespace: "n", path: "/", chunkBytes: 1, steps: 3, offset: 10, hashedBytes: digest.count,
            digest: digest.digest)
    }

    @Test func theSavedPrefixIsCheckedWhereverThePiecesEnd() {
        let saved = Self.position(after: #"{"a":1,"b":"#)
        for pieces in [1, 3, 7, 100] {
            let (same, matched) = Self.digest(#"{"a":1,"b":2,"c":3}"#, pieces: pieces, checking: saved)
            #expect(matched && same.isChecked, "pieces of \(pieces)")
            let (_, changed) = Self.digest(#"{"a":9,"b":2,"c":3}"#, pieces: pieces, checking: saved)
            #expect(!changed, "pieces of \(pieces)")
        }
        // A file shorter than the saved prefix is never taken as checked.
        let (short, _) = Self.digest(#"{"a":1"#, pieces: 2, checking: saved)
        #expect(!short.isChecked)
    }

    @Test func aPositionSurvivesItsFile() throws {
        let file = NSTemporaryDirectory() + "position-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try ImportPosition.load(file) == nil)
        let saved = Self.position(after: "{}")
        try saved.save(file)
        #expect(try ImportPosition.load(file) == saved)
        var moved = saved
        moved.server = "elsewhere"
        #expect(saved.matches(moved))
        moved.chunkBytes = 2
        #expect(!saved.matches(moved))
    }

    @Test func theProgressLineSaysHowFarAndHowFast() {
        let bar = ProgressBar(label: "import", total: 4 << 30, isTerminal: false)
        #expect(
            bar.line(1 << 30, "step 7", elapsed: .seconds(10))
                == "import  [#####---------------]   25%  1.00 GB of 4.00 GB  102.4 MB/s  ETA 0:30  step 7")
        let open = ProgressBar(label: "export", total: nil, isTerminal: false)
        #expect(open.line(1536, "", elapsed: .seconds(2)) == "export  1 KB  768 B/s")
    }
}
