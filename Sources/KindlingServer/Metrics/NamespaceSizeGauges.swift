import KindlingCore
import Metrics
import Prometheus
import Synchronization

/// `kindling_namespace_tree_bytes{namespace}`: the size of a namespace's data as compact JSON,
/// for the `limit` largest namespaces only, so a server with ten thousand namespaces does not
/// export ten thousand series. Updated when `/.metrics` is scraped (on a worker thread): a
/// namespace's size is measured again only when it was written since it was last measured, and
/// the series of a namespace that left the top `limit` is removed.
final class NamespaceSizeGauges: Sendable {
    let limit: Int
    private let factory: PrometheusMetricsFactory

    private struct State {
        /// The last measured size of each namespace, with the write count it was measured at.
        var sizes: [String: (version: UInt64, bytes: Int)] = [:]
        var gauges: [String: Meter] = [:]
    }

    private let state = Mutex(State())

    init(limit: Int, factory: PrometheusMetricsFactory) {
        self.limit = max(0, limit)
        self.factory = factory
    }

    /// Measures what changed among `namespaces` (name, write count, data) and exports the
    /// largest; those in `unmeasured` (that could not be looked at now) keep their last size.
    /// Namespaces not listed any more are forgotten.
    func update(_ namespaces: [(name: String, version: UInt64, root: Node)], unmeasured: [String] = []) {
        let known = state.withLock { $0.sizes }
        var sizes: [String: (version: UInt64, bytes: Int)] = [:]
        for name in unmeasured { sizes[name] = known[name] }
        for (name, version, root) in namespaces {
            if let previous = known[name], previous.version == version {
                sizes[name] = previous
            } else {
                // Counted, not kept: a large namespace's JSON never sits in memory whole.
                var writer = JSONWriter(countingOnly: 64 * 1024)
                root.write(to: &writer)
                sizes[name] = (version, writer.count)
            }
        }
        let top = sizes.sorted { $0.value.bytes != $1.value.bytes ? $0.value.bytes > $1.value.bytes : $0.key < $1.key }.prefix(limit)
        state.withLock { state in
            state.sizes = sizes
            let keep = Set(top.map(\.key))
            for (name, gauge) in state.gauges where !keep.contains(name) {
                gauge.destroy()
                state.gauges[name] = nil
            }
            for (name, size) in top {
                let gauge = state.gauges[name] ?? Meter(label: "kindling_namespace_tree_bytes", dimensions: [("namespace", name)], factory: factory)
                gauge.set(size.bytes)
                state.gauges[name] = gauge
            }
        }
    }
}
