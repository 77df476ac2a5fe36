import Foundation

/// A redis-server started by the harness on a free loopback port, as the peer in `--compare
/// redis` runs: no RDB snapshots, append-only file on or off with the given fsync policy.
public struct RedisServerProcess: Sendable {
    public let process: ChildProcess
    public let target: BenchTarget
    private let directory: TemporaryDirectory

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
        let directory = try TemporaryDirectory(prefix: "kindling-bench-redis")
        var arguments = [
            "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--protected-mode", "no",
            "--maxclients", "20000", "--dir", directory.path, "--daemonize", "no", "--logfile", "",
        ]
        switch fsync {
        case "always", "everysec": arguments += ["--appendonly", "yes", "--appendfsync", fsync]
        case "never": arguments += ["--appendonly", "yes", "--appendfsync", "no"]
        default: arguments += ["--appendonly", "no"]
        }
        let process = try ChildProcess(executable: executable, arguments: arguments, logPath: directory.path + "/redis.log")
        do {
            _ = try await process.waitForLine(timeout: .seconds(30)) { $0.contains("Ready to accept connections") }
            return RedisServerProcess(process: process, target: BenchTarget(host: "127.0.0.1", port: port, pid: process.pid), directory: directory)
        } catch {
            await process.stop()
            directory.remove()
            throw error
        }
    }

    public func stop() async {
        await process.stop()
        directory.remove()
    }
}
