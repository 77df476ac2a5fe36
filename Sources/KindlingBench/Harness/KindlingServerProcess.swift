import Foundation

/// `kindling serve` started by the harness on a free loopback port with a fresh data directory.
public struct KindlingServerProcess: Sendable {
    public let target: BenchTarget
    private let server: DirectoryServer

    /// The server's process, for its CPU time and memory.
    public var process: ChildProcess { server.process }

    /// Starts `executable` (see `defaultExecutable`) with `fsync` (`always`, `everysec`, `never`,
    /// or `memory` for no storage), and the security rules file `rules` if given, and waits for its
    /// banner.
    public static func start(executable: String, fsync: String, rules: String? = nil) async throws -> KindlingServerProcess {
        let banner = "Kindling is listening on "
        let (server, target) = try await DirectoryServer.start(
            prefix: "kindling-bench",
            executable: executable,
            logName: "server.log",
            arguments: { directory in
                let common = ["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "error"]
                return common + (fsync == "memory" ? ["--in-memory"] : ["--data-dir", directory + "/data", "--fsync", fsync])
                    + (rules.map { ["--rules", $0] } ?? [])
            },
            timeout: .seconds(60),
            ready: { $0.hasPrefix(banner) },
            target: { line, pid in try BenchTarget(url: "ws://" + line.dropFirst(banner.count), pid: pid) }
        )
        return KindlingServerProcess(target: target, server: server)
    }

    /// Stops the server and removes its data.
    public func stop() async { await server.stop() }

    /// `kindling` next to this executable (the two are built into the same directory).
    public static var defaultExecutable: String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("kindling").path
    }
}
