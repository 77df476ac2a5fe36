#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// CPU time and resident memory of one process at one moment, read from /proc (Linux only; elsewhere
/// the readings are nil and the report leaves them out).
public struct ProcessSample: Sendable {
    /// User plus system CPU seconds used so far.
    public var cpuSeconds: Double?
    /// Resident set size in bytes.
    public var residentBytes: Int?
    /// When the sample was taken.
    public var taken: ContinuousClock.Instant

    /// Samples `pid`, or this process when nil.
    public init(pid: Int32?) {
        let base = pid.map { "/proc/\($0)" } ?? "/proc/self"
        taken = .now
        cpuSeconds = ProcessSample.cpu(statPath: base + "/stat")
        residentBytes = ProcessSample.resident(statusPath: base + "/status")
    }

    /// The sum over the processes `pids` (the nodes of a cluster, on one machine), read at one
    /// moment; nil readings when `pids` is empty or any of them cannot be read.
    public init(pids: [Int32]) {
        let samples = pids.map { ProcessSample(pid: $0) }
        taken = samples.first?.taken ?? .now
        let cpu = samples.compactMap(\.cpuSeconds)
        let resident = samples.compactMap(\.residentBytes)
        cpuSeconds = !pids.isEmpty && cpu.count == pids.count ? cpu.reduce(0, +) : nil
        residentBytes = !pids.isEmpty && resident.count == pids.count ? resident.reduce(0, +) : nil
    }

    /// The share of one core used between `earlier` and this sample (1.0 = one core busy).
    public func cores(since earlier: ProcessSample) -> Double? {
        guard let now = cpuSeconds, let then = earlier.cpuSeconds else { return nil }
        let wall = (taken - earlier.taken).seconds
        return wall > 0 ? (now - then) / wall : nil
    }

    private static func cpu(statPath: String) -> Double? {
        guard let text = try? String(contentsOfFile: statPath, encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private static func resident(statusPath: String) -> Int? {
        guard let text = try? String(contentsOfFile: statusPath, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
