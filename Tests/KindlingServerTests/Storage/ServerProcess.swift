import Foundation
import KindlingTesting
import Synchronization
import Testing

/// The real `kindling serve` process on a free port, for the tests that kill it, limit it or
/// signal it.
final class ServerProcess: @unchecked Sendable {
    /// The `kindling` executable built beside the test bundle.
    static var binary: String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundle.appendingPathComponent("kindling").path
    }

    /// util-linux's `prlimit`, which sets a process's resource limits at its start or later.
    static let prlimit = URL(fileURLWithPath: "/usr/bin/prlimit")

    let process = Process()
    let port: Int
    /// Kept until the process is gone (a data directory that removes itself, say).
    private let keeping: (any Sendable & AnyObject)?
    var pid: Int32 { process.processIdentifier }
    private let errors = ErrorOutput()

    /// Starts the server on `dataDirectory` and waits for its banner; `descriptorLimit` starts it
    /// under util-linux's `prlimit` with that many open files at most (`softLimitOnly`: only the
    /// soft limit, which the server may raise up to the hard one).
    init(
        dataDirectory: String, arguments: [String] = [], descriptorLimit: Int? = nil, softLimitOnly: Bool = false,
        keeping: (any Sendable & AnyObject)? = nil
    ) throws {
        self.keeping = keeping
        let serve = ["serve", "--port", "0", "--data-dir", dataDirectory, "--log-level", "error"] + arguments
        if let descriptorLimit {
            process.executableURL = ServerProcess.prlimit
            let hard = softLimitOnly ? "" : "\(descriptorLimit)"
            process.arguments = ["--nofile=\(descriptorLimit):\(hard)", "--", ServerProcess.binary] + serve
        } else {
            process.executableURL = URL(fileURLWithPath: ServerProcess.binary)
            process.arguments = serve
        }
        let output = Pipe()
        process.standardOutput = output
        let errorPipe = Pipe()
        process.standardError = errorPipe
        errorPipe.fileHandleForReading.readabilityHandler = { [errors] handle in errors.append(handle.availableData) }
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("\n"), Date() < deadline {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            process.terminate()
            throw TestClientError.timedOut
        }
        self.port = port
    }

    /// What the server has written to standard error so far.
    var errorOutput: String { errors.text.withLock { $0 } }

    /// Waits until the server's log (standard error) says `text`; false after `timeout`.
    func waitForLog(containing text: String, timeout: Duration = .seconds(10)) async throws -> Bool {
        try await eventually(within: timeout) { errors.text.withLock { $0.contains(text) } }
    }

    /// Starts the server off the concurrency pool (see `offPool`): the banner may take a while.
    /// `keeping` lives as long as the process does.
    static func start(
        dataDirectory: String, arguments: [String] = [], descriptorLimit: Int? = nil, softLimitOnly: Bool = false,
        keeping: (any Sendable & AnyObject)? = nil
    ) async throws -> ServerProcess {
        try await offPool {
            try ServerProcess(
                dataDirectory: dataDirectory, arguments: arguments, descriptorLimit: descriptorLimit, softLimitOnly: softLimitOnly, keeping: keeping)
        }
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
        let pid = self.pid
        let status = try await offPool {
            let tool = Process()
            tool.executableURL = ServerProcess.prlimit
            tool.arguments = ["--pid", "\(pid)", "--fsize=\(bytes.map(String.init) ?? "unlimited"):unlimited"]
            try tool.run()
            tool.waitUntilExit()
            return tool.terminationStatus
        }
        #expect(status == 0, "prlimit failed")
    }

    /// Stops the process without ending it (SIGSTOP), as a hung server: its sockets stay open
    /// and nothing answers on them. `kill()` still ends it.
    func freeze() {
        Foundation.kill(process.processIdentifier, SIGSTOP)
    }

    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A test that fails part-way must not leave its server running.
    deinit {
        if process.isRunning { kill() }
    }
}

/// What a server process has written to standard error so far.
private final class ErrorOutput: Sendable {
    let text = Mutex("")

    func append(_ data: Data) { text.withLock { $0 += String(decoding: data, as: UTF8.self) } }
}
