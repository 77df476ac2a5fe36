import ArgumentParser
import Foundation
import KindlingCore
import KindlingProtocol
import KindlingServer

/// `kindling restore`: puts a backup back into a namespace, or rebuilds a namespace (or a path
/// in it) as it was at an instant of its history, as one write, through a running server or
/// offline on a data directory; a backup's rules too when it has them.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace a namespace's data with a backup, or with what it was at an instant of its history, as one write.",
        discussion: """
            --at TIME (milliseconds since 1970 or ISO 8601) rebuilds the data at --path as it was \
            then from the namespace's history (see `kindling serve --history`) and writes it into \
            the namespace named by --to, or back in place with --in-place. The restore is itself \
            a write in the history: restoring the instant before it undoes it. Find the instant \
            with `kindling history`.
              kindling restore --ns app --at 2026-12-05T09:29:00Z --path /users --in-place
              kindling restore --ns app --at 1764926940000 --to app-yesterday

            --from takes a data file that `kindling serve --backup-dir` wrote \
            (<time>_<namespace>_data.json.gz), a hosted Firebase backup or any JSON \
            export, gzipped or not (told by its first bytes). The backup's rules file \
            beside it (<time>_<namespace>_rules.json) is restored too when --path is \
            the root; --rules FILE names another, --no-rules keeps the rules as they are.
            Examples:
              kindling restore --from backups/20240501T120000.000Z_chat_data.json.gz \\
                --ns chat
              kindling restore --from chat.json --ns chat --path /rooms
              kindling restore --from chat.json.gz --ns chat --data-dir ./kindling-data
            Exit codes: 0 ok, 1 refused, 2 server unreachable, 64 bad arguments or files.
            """
    )

    /// Where the data to restore comes from.
    enum Source: Equatable {
        /// A backup or export file (`--from`).
        case backupFile(path: String)
        /// The namespace's own history at an instant (`--at`), into `target`.
        case pointInTime(Int64, target: String)
    }

    /// The most one REST write may hold (the hosted service's limit, and the server's).
    static let maxWriteBytes = 256 * 1024 * 1024

    /// What a source gives: the JSON to write, and rules to set when there are any.
    struct Payload {
        var json: [UInt8]
        var rules: (path: String, text: String)?
    }

    @Option(name: .customLong("from"), help: "The backup file to restore (gzipped or plain JSON).")
    var from: String?

    @Option(help: "The instant to restore from the namespace's history (milliseconds since 1970 or ISO 8601).")
    var at: String?

    @Option(name: .customLong("to"), help: "With --at: the namespace to write the restored data into (it may be new).")
    var targetNamespace: String?

    @Flag(name: .customLong("in-place"), help: "With --at: write the restored data back into the namespace it came from.")
    var inPlace = false

    @OptionGroup var location: DataLocation

    @Option(help: "A rules file to restore as the namespace's rules (default: the backup's own rules file, when beside it).")
    var rules: String?

    @Flag(name: .customLong("no-rules"), help: "Restore the data only, even when the backup has a rules file.")
    var noRules = false

    func validate() throws {
        _ = try source()
        if rules != nil, noRules { throw ValidationError("--rules and --no-rules contradict each other; give one.") }
        _ = try parsePath(location.path)
    }

    /// The source the options name.
    func source() throws -> Source {
        if let at {
            guard from == nil else { throw ValidationError("Restore either a backup (--from) or an instant (--at), not both.") }
            guard let time = HistoryTime.parse(at) else {
                throw ValidationError("--at must be milliseconds since 1970 or ISO 8601, such as 2026-12-05T09:30:00Z.")
            }
            switch (targetNamespace, inPlace) {
            case (let target?, false):
                guard NamespaceName.isValid(target) else { throw ValidationError("Invalid namespace \(target) for --to: \(NamespaceName.rule)") }
                return .pointInTime(time, target: target)
            case (nil, true): return .pointInTime(time, target: try location.remote.target().namespace)
            default: throw ValidationError("With --at, say where the restored data goes: --to NAMESPACE or --in-place.")
            }
        }
        if targetNamespace != nil || inPlace { throw ValidationError("--to and --in-place go with --at.") }
        guard let from else { throw ValidationError("Name the backup to restore with --from FILE, or an instant with --at TIME.") }
        return .backupFile(path: from)
    }

    func run() async throws {
        let progress: (String) -> Void = { printError("restore: \($0)") }
        let payload: Payload
        switch try source() {
        case .backupFile(let path): payload = try loadBackupFile(path, progress: progress)
        case .pointInTime(let time, let target): return try await restore(at: time, into: target, progress: progress)
        }
        let target = try location.remote.target()
        let path = try parsePath(location.path)
        if let directory = location.dataDirectory {
            try OfflineDataDirectory.importJSON(
                payload.json, directory: directory, namespace: target.namespace, path: path, logger: quietLogger(), progress: progress)
            if let rules = payload.rules {
                do {
                    try OfflineRules.replace(rules.text, directory: directory, namespace: target.namespace)
                } catch {
                    printError("error: the data is restored, but not the rules in \(rules.path): \(error)")
                    throw ExitCode(64)
                }
                progress("rules set from \(rules.path)")
            }
        } else {
            guard payload.json.count <= Self.maxWriteBytes else {
                printError(
                    "error: \(payload.json.count) bytes are more than one write may hold (256 MB); "
                        + "kindling import \(from ?? "FILE") writes it in atomic steps (and sets the backup's rules too)")
                throw ExitCode(64)
            }
            progress("writing \(payload.json.count) bytes to \(target.server) (namespace \(target.namespace), path \(location.path)) as one write")
            _ = try await restRequest("PUT", target.restURL(path: location.path, "&print=silent"), bytes: Data(payload.json))
            if let rules = payload.rules {
                _ = try await restRequest("PUT", target.settingsURL("rules"), bytes: Data(rules.text.utf8))
                progress("rules set from \(rules.path)")
            }
        }
        progress("done: namespace \(target.namespace) restored from \(from ?? "")")
    }

    /// `--from FILE`: the file's JSON (gunzipped when gzipped), and the rules to restore: those
    /// of `--rules`, else the backup's own beside it (at the root only; a subtree takes no
    /// namespace-wide rules unasked), unless `--no-rules`.
    func loadBackupFile(_ path: String, progress: (String) -> Void) throws -> Payload {
        let json: [UInt8]
        do throws(BackupError) {
            json = try BackupFile.read(path)
        } catch {
            printError("error: \(error)")
            throw ExitCode(64)
        }
        progress("read \(json.count) bytes of JSON from \(path)")
        var rulesPath = rules
        if rulesPath == nil, !noRules, let beside = BackupFile.rulesBeside(path) {
            if (try? parsePath(location.path))?.isRoot == true {
                progress("restoring the backup's rules too, from \(beside) (--no-rules leaves the rules as they are)")
                rulesPath = beside
            } else {
                progress("not restoring the backup's rules (\(beside)): --path is not the root; name them with --rules to restore them")
            }
        }
        guard let rulesPath else { return Payload(json: json, rules: nil) }
        return Payload(json: json, rules: (rulesPath, try readRulesFile(rulesPath)))
    }
}

extension RestoreCommand {
    /// `--at`: the data at `--path` as it was at `time`, written to the same path of `target`.
    /// Offline the data directory's history is read directly; through a server, an admin read
    /// of the past (`at=`, export form) and one write.
    func restore(at time: Int64, into target: String, progress: (String) -> Void) async throws {
        let source = try location.remote.target()
        let instant = "\(HistoryTime.iso8601(time)) (\(time))"
        if let directory = location.dataDirectory {
            let bytes: Int
            do {
                bytes = try OfflineDataDirectory.restore(
                    directory: directory, namespace: source.namespace, at: time, path: try parsePath(location.path), into: target,
                    logger: quietLogger())
            } catch let error as HistoryError {
                printError("error: \(error)")
                throw ExitCode(64)
            }
            progress("wrote \(source.namespace) \(location.path) as of \(instant), \(bytes) bytes, into \(target) as one write")
        } else {
            let data = try await restRequest("GET", source.restURL(path: location.path, "&format=export&at=\(time)"))
            progress("read \(source.namespace) \(location.path) as of \(instant): \(data.count) bytes")
            var destination = source
            destination.namespace = target
            _ = try await restRequest("PUT", destination.restURL(path: location.path, "&print=silent"), bytes: Data(data))
            progress("wrote it into \(target) as one write")
        }
        progress("done; to undo, restore the instant before now with --in-place")
    }
}
