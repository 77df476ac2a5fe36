/// Which backup files of a namespace go once a new backup is complete: `--backup-keep` says
/// how many backups stay. Pure, so the choice is tested on names alone.
struct BackupRetention: Sendable {
    /// Backups kept per namespace (at least 1).
    let keep: Int

    /// The files among `names` to delete for `namespace`: data files beyond the newest `keep`;
    /// rules files whose data file is not among those kept (older ones, or one left without its
    /// data by a process that died between the two); and temporary files, which only a process
    /// that died mid-backup leaves (backups of one server run one at a time, and this is asked
    /// between them). Files of other namespaces are not touched.
    func deletions(among names: [BackupFileName], namespace: String) -> [BackupFileName] {
        let mine = names.filter { $0.namespace == namespace }
        let temporary = mine.filter(\.isTemporary)
        let complete = mine.filter { !$0.isTemporary }
        let data = complete.filter { $0.kind == .data }.sorted { $0.time > $1.time }
        let kept = Set(data.prefix(max(1, keep)).map(\.time))
        let oldData = data.filter { !kept.contains($0.time) }
        let newest = data.first?.time ?? Int64.min
        let orphanedRules = complete.filter { $0.kind == .rules && !kept.contains($0.time) && $0.time < newest }
        return temporary + oldData + orphanedRules
    }
}
