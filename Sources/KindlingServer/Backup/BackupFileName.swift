/// The name of one file of a backup, in the hosted Realtime Database's backup layout.
///
/// The hosted service's automated backups (https://firebase.google.com/docs/database/backups)
/// are, per database, a file of the data and a file of the Security Rules, both JSON, the data
/// gzipped by default; restoring one is gunzipping the data file and importing it (the
/// console's "Import JSON", or a REST `PUT` of it at the root). Its documentation does not
/// spell out the object names, which name each file by its time and its database; Kindling
/// names them `<time>_<namespace>_data.json.gz` and `<time>_<namespace>_rules.json`, `<time>`
/// being the UTC instant of the backup in ISO 8601's basic form with milliseconds
/// (`20240501T120000.123Z`): no `:`, which Windows file names and `scp` arguments cannot hold,
/// and names sort as their times do. A namespace name has no `_` (`NamespaceName`), so a name
/// reads back unambiguously.
///
/// A file being written is `<name>.tmp` until it is complete and synced, then renamed: a
/// process killed mid-backup leaves at most a `.tmp` file, never one that looks complete.
struct BackupFileName: Equatable, Sendable, CustomStringConvertible {
    /// The two files of a backup.
    enum Kind: Equatable, Sendable {
        /// The whole tree as JSON, gzipped (`_data.json.gz`).
        case data
        /// The rules in force, as they were given (`_rules.json`).
        case rules

        var suffix: String {
            switch self {
            case .data: "_data.json.gz"
            case .rules: "_rules.json"
            }
        }
    }

    /// The backup's instant, in milliseconds since the Unix epoch.
    var time: Int64
    var namespace: String
    var kind: Kind
    /// A file still being written (`.tmp`), or left by a process that died writing it.
    var isTemporary = false

    static let temporarySuffix = ".tmp"

    var description: String {
        BackupTime.text(time) + "_" + namespace + kind.suffix + (isTemporary ? BackupFileName.temporarySuffix : "")
    }

    init(time: Int64, namespace: String, kind: Kind, isTemporary: Bool = false) {
        self.time = time
        self.namespace = namespace
        self.kind = kind
        self.isTemporary = isTemporary
    }

    /// Reads a file name; nil for any other file.
    init?(parsing name: String) {
        var rest = Substring(name)
        let temporary = rest.hasSuffix(BackupFileName.temporarySuffix)
        if temporary { rest = rest.dropLast(BackupFileName.temporarySuffix.count) }
        let kind: Kind
        if rest.hasSuffix(Kind.data.suffix) {
            kind = .data
        } else if rest.hasSuffix(Kind.rules.suffix) {
            kind = .rules
        } else {
            return nil
        }
        rest = rest.dropLast(kind.suffix.count)
        guard let separator = rest.firstIndex(of: "_"), let time = BackupTime.parse(rest[..<separator]) else { return nil }
        let namespace = String(rest[rest.index(after: separator)...])
        guard !namespace.isEmpty, !namespace.contains("_") else { return nil }
        self.init(time: time, namespace: namespace, kind: kind, isTemporary: temporary)
    }

    /// The name of the other file of the same backup.
    func sibling(_ kind: Kind) -> BackupFileName {
        BackupFileName(time: time, namespace: namespace, kind: kind)
    }
}
