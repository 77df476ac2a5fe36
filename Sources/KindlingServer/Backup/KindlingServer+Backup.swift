extension KindlingServer {
    /// Backs every namespace holding data up now, as the schedule would (after any backup
    /// running), and returns what was written; nil when the server has no `--backup-dir`. For
    /// an operator's "back up before this change", and for tests, which must not wait an interval.
    public func backUpNow() async -> BackupRun? {
        await backups?.backUpNow()
    }
}
