import Foundation
import KindlingTesting
import Testing

/// The real `kindling serve` process on a free port, for the tests that kill it, limit it or
/// signal it.
final class ServerProcess: Sendable {
    /// The `kindling` executable built beside the test bundle.
    static var binary: String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundle.appendingPathComponent("kindling").path
    }

    /// util-linux's `prlimit`, which sets a process's resource limits at its start or later.
    static let prlimit = "/usr/bin/prlimit"

    /// The process: its output, signals and how it ended.
    let child: ChildProcess
    let port: Int
    /// Kept until the process is gone (a data directory that removes itself, say).
    private let keeping: (any Sendable & AnyObject)?
    var pid: Int32 { child.pid }

    private init(child: ChildProcess, port: Int, keeping: (any Sendable & AnyObject)?) {
        self.child = child
        self.port = port
        self.keeping = keeping
    }

    /// What the server has written to standard error so far.
    var errorOutput: String { child.errorOutput }

    /// Waits until the server's log (standard error) says `text`; false after `timeout`.
    func waitForLog(containing text: String, timeout: Duration = .seconds(10)) async throws -> Bool {
        try await child.waitFor(inErrors: true, timeout: timeout) { $0.contains(text) }
    }

    /// Starts the server on `dataDirectory` and waits for its banner; `descriptorLimit` starts it
    /// under util-linux's `prlimit` with that many open files at most (`softLimitOnly`: only the
    /// soft limit, which the server may raise up to the hard one). `keeping` lives as long as the
    /// process does.
    static func start(
        dataDirectory: String, arguments: [String] = [], descriptorLimit: Int? = nil, softLimitOnly: Bool = false,
        keeping: (any Sendable & AnyObject)? = nil
    ) async throws -> ServerProcess {
        let serve = ["serve", "--port", "0", "--data-dir", dataDirectory, "--log-level", "error"] + arguments
        let child: ChildProcess
        if let descriptorLimit {
            let hard = softLimitOnly ? "" : "\(descriptorLimit)"
            child = try await ChildProcess.start(prlimit, arguments: ["--nofile=\(descriptorLimit):\(hard)", "--", binary] + serve)
        } else {
            child = try await ChildProcess.start(binary, arguments: serve)
        }
        _ = try await child.waitFor(timeout: .seconds(30)) { $0.contains("\n") }
        guard let line = child.output.split(separator: "\n").first, let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            await child.kill()
            throw TestClientError.timedOut
        }
        return ServerProcess(child: child, port: port, keeping: keeping)
    }

    /// The CPU seconds (user and system) the server has used so far; nil when `/proc` does not
    /// tell (a test then fails instead of measuring nothing).
    func cpuSeconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Sets the largest file the server may write to `bytes` (nil lifts the limit): its next
    /// append past it fails, as on a full disk.
    func limitFileSize(to bytes: Int?) async throws {
        let tool = try await ChildProcess.run(
            ServerProcess.prlimit, arguments: ["--pid", "\(pid)", "--fsize=\(bytes.map(String.init) ?? "unlimited"):unlimited"])
        #expect(tool.ending == .exited(0), "prlimit failed: \(tool.errors)")
    }

    /// Stops the process without ending it (SIGSTOP), as a hung server: its sockets stay open
    /// and nothing answers on them. `kill()` still ends it. Returns once the process is stopped
    /// (signals reach it asynchronously): a request sent after this cannot be served by it.
    func freeze() async {
        child.signal(SIGSTOP)
        // "pid (comm) S ...": the state follows the command name.
        _ = try? await eventually(within: .seconds(10), every: .milliseconds(5)) { [pid] in
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else {
                return true
            }
            return text[text.index(after: close)...].drop { $0 == " " }.first == "T"
        }
    }

    /// Lets a frozen process run again (SIGCONT).
    func thaw() {
        child.signal(SIGCONT)
    }

    /// Ends the server with SIGKILL and waits until it has.
    func kill() async {
        await child.kill()
    }
}
