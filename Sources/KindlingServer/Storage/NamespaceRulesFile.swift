import Foundation

/// A namespace's own security rules on disk (`rules.json` in its folder), exactly as they were
/// given, comments included, so `GET /.settings/rules.json` returns them after a restart too.
struct NamespaceRulesFile: Sendable {
    let path: String

    init(directory: String) {
        self.path = directory + "/rules.json"
    }

    /// Replaces the stored rules; a crash leaves the old file or the whole new one.
    func save(_ text: String) throws {
        try StorageLayout.createDirectory((path as NSString).deletingLastPathComponent)
        let bytes = Array(text.utf8)
        try StorageLayout.writeAtomically(to: path) { descriptor, temporary in
            try bytes.withUnsafeBytes { try StorageLayout.writeAll($0, to: descriptor, path: temporary) }
        }
    }

    /// The stored rules, or nil when there are none.
    func load() -> String? {
        guard FileManager.default.fileExists(atPath: path), let bytes = try? StorageLayout.readFile(path) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
