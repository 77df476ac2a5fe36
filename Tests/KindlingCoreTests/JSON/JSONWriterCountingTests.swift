import KindlingCore
import Testing

/// A counting writer measures a tree's JSON exactly without holding it whole.
struct JSONWriterCountingTests {
    @Test func countsExactlyWhatAFullWriterWrites() throws {
        let users = (0..<2_000).map { #""u\#($0)":{"name":"user \#($0)","score":\#($0).5,"tags":["a","b"],"ok":true}"# }
        let tree = try Node(jsonText: #"{"users":{"# + users.joined(separator: ",") + #"},"list":[1,2,3]}"#)
        var full = JSONWriter()
        tree.write(to: &full)
        var counting = JSONWriter(countingOnly: 1024)
        tree.write(to: &counting)
        #expect(counting.count == full.bytes.count)
        #expect(full.bytes.count > 100_000)
        // What it still holds is at most the limit plus one child's JSON.
        #expect(counting.bytes.count < 2048)
        var plain = JSONWriter()
        plain.write(.string("no spill without a limit"))
        plain.spillIfFull()
        #expect(plain.count == plain.bytes.count)
    }
}
