import ArgumentParser
import KindlingServer

/// `kindling serve`'s scheduled backups: every namespace holding data, every interval, in the
/// hosted service's backup form (gzipped JSON of the data, and the rules).
struct BackupOptions: ParsableArguments {
    @Option(
        name: .customLong("backup-dir"),
        help: ArgumentHelp(
            "Back every namespace holding data up into this directory on a schedule (created when missing; it must be writable).",
            discussion:
                "Each backup is <time>_<namespace>_data.json.gz (the data as JSON, priorities included) and <time>_<namespace>_rules.json, as the hosted service's backups are; `kindling restore --from FILE` restores one. Backups are written while serving and never hold writes up."
        ))
    var directory: String?

    @Option(
        name: .customLong("backup-every"),
        help: "Time between backups with --backup-dir: a whole number and s, m, h or d, from 1m to 30d (default 1h).")
    var every: String?

    @Option(
        name: .customLong("backup-keep"),
        help: "Backups kept per namespace with --backup-dir, 1 to 100000 (default 48); older ones are deleted after each new one.")
    var keep: Int?

    func validate() throws {
        guard directory != nil else {
            if every != nil || keep != nil { throw ValidationError("--backup-every and --backup-keep need --backup-dir.") }
            return
        }
        do throws(BackupError) {
            try configuration?.validate()
        } catch {
            throw ValidationError("--backup-every must be from 1m to 30d (for example 30m, 1h or 1d); --backup-keep from 1 to 100000.")
        }
    }

    /// The backup settings, or nil without `--backup-dir`. An interval that does not read is
    /// left at zero for `validate` to refuse.
    var configuration: BackupConfiguration? {
        guard let directory else { return nil }
        return BackupConfiguration(
            directory: directory,
            interval: every.map { DurationText.parse($0) ?? .zero } ?? BackupConfiguration.defaultInterval,
            keep: keep ?? BackupConfiguration.defaultKeep)
    }
}
