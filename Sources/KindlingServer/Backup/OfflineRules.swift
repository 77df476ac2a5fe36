import KindlingCore

/// Sets a namespace's own rules in a data directory no server runs on: `kindling restore
/// --data-dir` with a backup's rules (through a server, `PUT /.settings/rules.json` does it).
public enum OfflineRules {
    /// Checks `text` loads as rules, then stores it as `namespace`'s own rules (exactly as
    /// given, so a server started on the directory serves them), atomically. Throws when the
    /// rules do not load, a server holds the directory, or the file cannot be written.
    public static func replace(_ text: String, directory: String, namespace: String) throws {
        _ = try RulesDocument.parse(text)
        let lock = try DataDirectoryLock(directory: directory, server: false)
        defer { lock.release() }
        try NamespaceRulesFile(directory: StorageLayout.directory(dataDirectory: directory, namespace: namespace)).save(text)
    }
}
