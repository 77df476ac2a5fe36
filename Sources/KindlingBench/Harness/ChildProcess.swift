#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A server the harness starts as a child process (kindling or redis-server), with its output in
/// a log file, so its CPU time and memory are measured apart from the harness's own.
public final class ChildProcess: Sendable {
    public let pid: Int32
    /// Where the child's standard output and error go.
    public let logPath: String

    /// Starts `executable` with `arguments`, output to `logPath`.
    public init(executable: String, arguments: [String], logPath: String) throws(BenchError) {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError.serverFailed("\(executable) not found or not executable")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        ChildProcess.inheritNothing(&actions)
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, nil, argv, environ)
        guard status == 0 else { throw BenchError.serverFailed("could not start \(executable): error \(status)") }
        pid = child
        self.logPath = logPath
    }

    /// Makes the child inherit no descriptor above standard error. A descriptor of this process
    /// left open in the child would outlive its owner's close: a test's listening socket would
    /// keep its port busy, and another test's pipe would never reach end-of-file while the child
    /// runs. (NIO and Foundation open theirs without close-on-exec.) glibc 2.34+ closes them in the
    /// child itself, atomically with the spawn; the Swift Glibc module does not export that call,
    /// so it is looked up. Elsewhere every descriptor open now is marked close-on-exec instead.
    private static func inheritNothing(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            return
        }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for descriptor in names.compactMap({ Int32($0) }) where descriptor > 2 {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// Waits until a line of the log satisfies `ready` and returns that line; fails if the child
    /// exits first or `timeout` passes.
    public func waitForLine(timeout: Duration, _ ready: (Substring) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let line = log.split(separator: "\n").first(where: ready) { return String(line) }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw BenchError.serverFailed("exited (status \(status)) before it was ready: \(log.suffix(600))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchError.serverFailed(
            "not ready after \(timeout); log: \((try? String(contentsOfFile: logPath, encoding: .utf8))?.suffix(600) ?? "")")
    }

    /// Asks the child to stop (SIGTERM), and kills it if it has not exited after `grace`.
    public func stop(grace: Duration = .seconds(10)) async {
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || result < 0 { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }
}
