/// The server a scenario drives: where it listens, and its process id when the harness can read
/// its CPU time and memory from /proc (a server the harness started, or one given with its pid).
public struct BenchTarget: Sendable {
    public var host: String
    public var port: Int
    public var pid: Int32?

    public init(host: String, port: Int, pid: Int32? = nil) {
        self.host = host
        self.port = port
        self.pid = pid
    }

    /// Parses `ws://host:port` (a path after the port is ignored).
    public init(url: String, pid: Int32? = nil) throws(BenchError) {
        var rest = Substring(url)
        for scheme in ["ws://", "http://"] where rest.hasPrefix(scheme) { rest = rest.dropFirst(scheme.count) }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
            throw BenchError.invalidArgument("--url must look like ws://127.0.0.1:9000, not \(url)")
        }
        self.init(host: String(rest[..<colon]), port: port, pid: pid)
    }

    /// The process ids of `targets` when every one of them has one, else none: CPU and memory
    /// summed over only some nodes of a cluster would read as the whole cluster's.
    public static func pids(of targets: [BenchTarget]) -> [Int32] {
        let pids = targets.compactMap(\.pid)
        return pids.count == targets.count ? pids : []
    }
}
