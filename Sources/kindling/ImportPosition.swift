import ArgumentParser
import Crypto
import Foundation

/// How far an import got, saved after each step it completed (`--position-file`, by default
/// `<file>.import-position` beside the file), so `kindling import --resume` goes on from there
/// after an interruption: a killed process, a lost connection, a refused step, Ctrl-C.
///
/// Steps are cut the same way from the same text (`ImportChunker`), so resuming reads the file
/// again and sends only the steps after `steps`; `digest` (SHA-256 of the first `hashedBytes`
/// bytes of the JSON) makes sure it is the same text, and the namespace, path and step size
/// must match.
struct ImportPosition: Codable, Equatable {
    var input: String
    var server: String
    var namespace: String
    var path: String
    var chunkBytes: Int
    /// Steps applied.
    var steps: Int
    /// Bytes of the JSON text the applied steps took (all before it is in the database).
    var offset: Int
    var hashedBytes: Int
    var digest: String

    /// The position saved at `file`, or nil when there is none.
    static func load(_ file: String) throws -> ImportPosition? {
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        do {
            return try JSONDecoder().decode(ImportPosition.self, from: data)
        } catch {
            throw ValidationError("\(file) is not an import position file (\(error)); delete it to start over.")
        }
    }

    /// Saves the position at `file`, replacing the last one whole (a temporary file renamed).
    func save(_ file: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: file), options: .atomic)
    }

    /// The same import, resumed: the same namespace, path and step size (the server may have
    /// moved to another address since).
    func matches(_ other: ImportPosition) -> Bool {
        namespace == other.namespace && path == other.path && chunkBytes == other.chunkBytes
    }
}

/// SHA-256 of the first bytes of a text read in pieces, checked against a saved position's
/// digest at exactly its `hashedBytes` when resuming.
struct PrefixDigest {
    private var hasher = SHA256()
    private(set) var count = 0
    /// The saved prefix to check, until it has been checked.
    private var expected: (bytes: Int, digest: String)?

    init(checking position: ImportPosition? = nil) {
        expected = position.map { ($0.hashedBytes, $0.digest) }
    }

    /// The digest of all bytes added so far.
    var digest: String {
        hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// True once the saved prefix (if any) has been read and matched.
    var isChecked: Bool { expected == nil }

    /// Adds the next piece; false when the saved prefix ends inside it and does not match.
    mutating func add(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let expected, count + bytes.count >= expected.bytes {
            let head = expected.bytes - count
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: bytes[..<head]))
            count += head
            guard digest == expected.digest else { return false }
            self.expected = nil
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: bytes[head...]))
            count += bytes.count - head
            return true
        }
        hasher.update(bufferPointer: bytes)
        count += bytes.count
        return true
    }
}
