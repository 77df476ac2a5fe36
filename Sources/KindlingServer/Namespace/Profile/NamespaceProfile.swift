/// A namespace's profiling while at least one profiler listens: where its records go, and the
/// addresses of its realtime connections (records name their client by it).
struct NamespaceProfile {
    /// The profilers listening, by their stream's id.
    var profilers: [ConnectionID: ProfileOutbound] = [:]
    /// Each realtime connection's address, given as it attaches or, for one already open when
    /// profiling began, asked of its event loop. Kept only while someone profiles, so an idle
    /// connection costs nothing more for it.
    var addresses: [ConnectionID: String] = [:]
}
