import Foundation

/// `kindling serve` started by the harness on a free loopback port with a fresh data directory.
public struct KindlingServerProcess: Sendable {
    public let process: ChildProcess
    public let target: BenchTarget
    private let directory: TemporaryDirectory

    /// Starts `executable` (see `defaultExecutable`) with `fsync` (`always`, `everysec`, `never`,
    /// or `memory` for no storage) and waits for its banner.
    public static func start(executable: String, fsync: String) async throws -> KindlingServerProcess {
        let directory = try TemporaryDirectory(prefix: "kindling-bench")
        var arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "error"]
        if fsync == "memory" {
            arguments.append("--in-memory")
        } else {
            arguments += ["--data-dir", directory.path + "/data", "--fsync", fsync]
        }
        let process = try ChildProcess(executable: executable, arguments: arguments, logPath: directory.path + "/server.log")
        do {
            let banner = try await process.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("Kindling is listening on ") }
            let address = banner.dropFirst("Kindling is listening on ".count)
            let target = try BenchTarget(url: "ws://" + address, pid: process.pid)
            return KindlingServerProcess(process: process, target: target, directory: directory)
        } catch {
            await process.stop()
            directory.remove()
            throw error
        }
    }

    /// Stops the server and removes its data.
    public func stop() async {
        await process.stop()
        directory.remove()
    }

    /// `kindling` next to this executable (the two are built into the same directory).
    public static var defaultExecutable: String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("kindling").path
    }
}
