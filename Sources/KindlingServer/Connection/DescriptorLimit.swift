#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors (RLIMIT_NOFILE), which bounds its connections.
enum DescriptorLimit {
    /// Descriptors kept back from connections for the server's own files (logs, snapshots,
    /// the data-directory lock) and for accepting a connection only to close it.
    static let reserve = 64

    /// Raises the soft limit to the hard one (the default soft limit is often 1,024, far below
    /// what the machine allows) and returns the soft limit in force afterwards.
    @discardableResult
    static func raise() -> Int {
        var limits = rlimit()
        guard getrlimit(resourceLimit, &limits) == 0 else { return 1024 }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            #if canImport(Darwin)
            // Darwin refuses a soft limit above OPEN_MAX whatever the hard limit says.
            raised.rlim_cur = min(limits.rlim_max, rlim_t(OPEN_MAX))
            #endif
            if setrlimit(resourceLimit, &raised) == 0 { limits = raised }
        }
        return limits.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limits.rlim_cur)
    }

    /// The namespace logs kept open at once under a soft limit of `soft` descriptors: a quarter
    /// (at least 8, at most 65,536).
    static func logs(under soft: Int) -> Int {
        max(8, min(soft / 4, 1 << 16))
    }

    /// The most connections worth accepting under a soft limit of `soft` descriptors: what the
    /// logs and the reserve leave.
    static func connections(under soft: Int) -> Int {
        max(8, soft - logs(under: soft) - reserve)
    }

    #if canImport(Glibc)
    private static let resourceLimit = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceLimit = RLIMIT_NOFILE
    #endif
}
