import Metrics
import Prometheus

/// The backups' series at `/.metrics`, in the server's own registry (as `ServerMetrics`' are):
/// `kindling_backups_total` (namespace backups written), `kindling_backup_failures_total`
/// (namespace backups that failed, or runs that could not list the directory),
/// `kindling_backup_bytes_total` (gzipped bytes written) and
/// `kindling_backup_last_success_timestamp_seconds` (Unix time of the last backup written), so
/// an alert can fire on failures or on a last success grown old.
final class BackupMetrics: Sendable {
    private let written: CoreMetrics.Counter
    private let failed: CoreMetrics.Counter
    private let bytes: CoreMetrics.Counter
    private let lastSuccess: Meter

    init(registry: PrometheusCollectorRegistry) {
        let factory = PrometheusMetricsFactory(registry: registry)
        written = CoreMetrics.Counter(label: "kindling_backups_total", factory: factory)
        failed = CoreMetrics.Counter(label: "kindling_backup_failures_total", factory: factory)
        bytes = CoreMetrics.Counter(label: "kindling_backup_bytes_total", factory: factory)
        lastSuccess = Meter(label: "kindling_backup_last_success_timestamp_seconds", factory: factory)
    }

    /// A namespace's backup was written, `bytes` long, at `time` (milliseconds since the epoch).
    func succeeded(bytes count: Int, at time: Int64) {
        written.increment()
        bytes.increment(by: count)
        lastSuccess.set(Double(time) / 1000)
    }

    func failure() { failed.increment() }
}
