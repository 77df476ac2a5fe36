import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer

/// `kindling restore`: puts a backup back into a namespace, as one write, through a running
/// server or offline on a data directory; the backup's rules too when it has them.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace a namespace's data (and rules) with a backup, as one write.",
        discussion: """
            --from takes a data file that `kindling serve --backup-dir` wrote
            (<time>_<namespace>_data.json.gz), a hosted Firebase backup or any JSON
            export, gzipped or not (told by its first bytes). The backup's rules file
            beside it (<time>_<namespace>_rules.json) is restored too when --path is
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
    }

    /// What a source gives: the JSON to write, and rules to set when there are any.
    struct Payload {
        var json: [UInt8]
        var rules: (path: String, text: String)?
    }

    @Option(name: .customLong("from"), help: "The backup file to restore (gzipped or plain JSON).")
    var from: String?

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
        guard let from else { throw ValidationError("Name the backup to restore with --from FILE.") }
        return .backupFile(path: from)
    }

    func run() async throws {
        let progress: (String) -> Void = { printError("restore: \($0)") }
        let payload: Payload
        switch try source() {
        case .backupFile(let path): payload = try loadBackupFile(path, progress: progress)
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
        let text: String
        do throws(BackupError) {
            text = String(decoding: try BackupFile.read(rulesPath), as: UTF8.self)
        } catch {
            printError("error: \(error)")
            throw ExitCode(64)
        }
        do throws(RulesError) {
            _ = try RulesDocument.parse(text)
        } catch {
            printError("error: \(rulesPath): \(error)")
            throw ExitCode(64)
        }
        return Payload(json: json, rules: (rulesPath, text))
    }
}
