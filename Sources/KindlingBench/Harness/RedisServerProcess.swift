import Foundation

/// A redis-server started by the harness on a free loopback port, as the peer in `--compare
/// redis` runs: no RDB snapshots, append-only file on or off with the given fsync policy.
public struct RedisServerProcess: Sendable {
    public let target: BenchTarget
    private let server: DirectoryServer

    /// The server's process, for its CPU time and memory.
    public var process: ChildProcess { server.process }

    /// The usual places of the Debian package's binary.
    public static func findExecutable() -> String? {
        ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts redis on a free loopback port, trying another port if one was taken between the
    /// look-up and redis binding it.
    public static func start(executable: String, fsync: String) async throws -> RedisServerProcess {
        var attempt = 0
        while true {
            do {
                return try await start(executable: executable, fsync: fsync, port: try await FreePort.find())
            } catch {
                attempt += 1
                if attempt == 3 { throw error }
            }
        }
    }

    /// Starts redis with the append-only file synced as Kindling's `fsync` mode says (`always`,
    /// `everysec`, `never` = appendfsync no), or with no append-only file for `memory`.
    public static func start(executable: String, fsync: String, port: Int) async throws -> RedisServerProcess {
        let (server, target) = try await DirectoryServer.start(
            prefix: "kindling-bench-redis",
            executable: executable,
            logName: "redis.log",
            arguments: { directory in
                let common = [
                    "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--protected-mode", "no",
                    "--maxclients", "20000", "--dir", directory, "--daemonize", "no", "--logfile", "",
                ]
                switch fsync {
                case "always", "everysec": return common + ["--appendonly", "yes", "--appendfsync", fsync]
                case "never": return common + ["--appendonly", "yes", "--appendfsync", "no"]
                default: return common + ["--appendonly", "no"]
                }
            },
            timeout: .seconds(30),
            ready: { $0.contains("Ready to accept connections") },
            target: { _, pid in BenchTarget(host: "127.0.0.1", port: port, pid: pid) }
        )
        return RedisServerProcess(target: target, server: server)
    }

    /// Stops redis and removes its directory.
    public func stop() async { await server.stop() }
}
