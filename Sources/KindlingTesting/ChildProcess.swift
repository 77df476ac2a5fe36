#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Subprocess
import SystemPackage
import Synchronization

/// A program a test starts and keeps: what it writes to standard output and standard error as it
/// comes, signals, and how it ended.
///
/// Built on swift-subprocess rather than Foundation's `Process`: in Swift 6.3 `Process.run()` can
/// crash the whole test process (its scan of /proc/self/fd over-reads glibc's buffer,
/// swift-corelibs-foundation#5472), and `FileHandle`'s blocking reads end it with a fatal error
/// when a signal interrupts them (EINTR). Signals go through the process's descriptor (pidfd), so
/// none reaches another process that later got the same pid.
public final class ChildProcess: Sendable {
    /// How a process ended.
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// The process's id, for tools that take one (`prlimit --pid`, `/proc/PID/stat`).
    public let pid: Int32
    private let transcript: Transcript
    private let signals: AsyncStream<Int32>.Continuation
    private let running: Task<Ending, any Error>

    private init(pid: Int32, transcript: Transcript, signals: AsyncStream<Int32>.Continuation, running: Task<Ending, any Error>) {
        self.pid = pid
        self.transcript = transcript
        self.signals = signals
        self.running = running
    }

    /// Starts `executable` with `arguments`, and this process's environment with `environment`
    /// added; returns once it runs. Throws when it cannot be started.
    public static func start(_ executable: String, arguments: [String] = [], environment: [String: String] = [:]) async throws -> ChildProcess {
        let transcript = Transcript()
        let (signalStream, signals) = AsyncStream.makeStream(of: Int32.self)
        let (started, starting) = AsyncThrowingStream.makeStream(of: Int32.self)
        var overrides: [Environment.Key: String?] = [:]
        for (name, value) in environment {
            guard let key = Environment.Key(rawValue: name) else { throw ChildProcessError.badEnvironmentName(name) }
            overrides[key] = value
        }
        let running = Task<Ending, any Error> {
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(executable)), arguments: Arguments(arguments), environment: .inherit.updating(overrides), input: .none,
                    output: .sequence, error: .sequence
                ) { execution in
                    starting.yield(execution.processIdentifier.value)
                    starting.finish()
                    // Signals asked for while the process runs go through its descriptor.
                    let sending = Task {
                        for await signal in signalStream { try? execution.send(signal: Signal(rawValue: signal)) }
                    }
                    async let output: Void = transcript.read(execution.standardOutput, into: .output)
                    async let errors: Void = transcript.read(execution.standardError, into: .errors)
                    _ = try await (output, errors)
                    signals.finish()
                    await sending.value
                }
                let ending: Ending
                switch result.terminationStatus {
                case .exited(let code): ending = .exited(code)
                case .signaled(let signal): ending = .signalled(signal)
                }
                transcript.end(ending)
                return ending
            } catch {
                starting.finish(throwing: error)
                signals.finish()
                transcript.end(.exited(-1))
                throw error
            }
        }
        var pids = started.makeAsyncIterator()
        guard let pid = try await pids.next() else { throw ChildProcessError.notStarted(executable) }
        return ChildProcess(pid: pid, transcript: transcript, signals: signals, running: running)
    }

    /// Runs `executable` to its end; returns how it ended and what it wrote.
    public static func run(_ executable: String, arguments: [String] = [], environment: [String: String] = [:]) async throws -> (
        ending: Ending, output: String, errors: String
    ) {
        let process = try await start(executable, arguments: arguments, environment: environment)
        let ending = try await process.wait()
        return (ending, process.output, process.errorOutput)
    }

    /// What the process has written to standard output so far.
    public var output: String { transcript.text(.output) }

    /// What the process has written to standard error so far.
    public var errorOutput: String { transcript.text(.errors) }

    /// How the process ended, or nil while it runs.
    public var ending: Ending? { transcript.state.withLock { $0.ending } }

    /// Whether the process still runs.
    public var isRunning: Bool { ending == nil }

    /// Waits until `condition` holds of standard output, or of standard error with `inErrors`;
    /// false when the process ended or `timeout` passed first.
    public func waitFor(
        inErrors: Bool = false, timeout: Duration = .seconds(20), _ condition: (String) -> Bool
    ) async throws -> Bool {
        let stream: Transcript.Stream = inErrors ? .errors : .output
        return try await eventually(within: timeout) { [transcript] in
            condition(transcript.text(stream)) || transcript.state.withLock { $0.ending != nil }
        } && condition(transcript.text(stream))
    }

    /// Sends `signal` (SIGHUP, SIGINT, SIGSTOP, ...) to the process; nothing once it has ended.
    public func signal(_ signal: Int32) {
        signals.yield(signal)
    }

    /// Waits for the process to end.
    @discardableResult
    public func wait() async throws -> Ending {
        try await running.value
    }

    /// Ends the process with SIGKILL (no goodbye) and waits until it has.
    public func kill() async {
        signal(SIGKILL)
        _ = try? await running.value
    }

    /// Asks the process to end (SIGTERM), and kills it if it has not within `grace`.
    public func stop(grace: Duration = .seconds(2)) async {
        signal(SIGTERM)
        if (try? await eventually(within: grace) { [transcript] in transcript.state.withLock { $0.ending != nil } }) != true {
            await kill()
        }
    }

    /// A test that fails part-way must not leave its process running.
    deinit {
        signals.yield(SIGKILL)
    }
}

/// Why a child process could not be run.
public enum ChildProcessError: Error, Equatable {
    case badEnvironmentName(String)
    case notStarted(String)
}

/// What a child process has written, and how it ended.
private final class Transcript: Sendable {
    enum Stream: Sendable {
        case output, errors
    }

    struct State {
        var output: [UInt8] = []
        var errors: [UInt8] = []
        var ending: ChildProcess.Ending?
    }

    let state = Mutex(State())

    func read(_ sequence: SubprocessOutputSequence, into stream: Stream) async throws {
        for try await buffer in sequence {
            buffer.withUnsafeBytes { bytes in
                state.withLock { state in
                    switch stream {
                    case .output: state.output.append(contentsOf: bytes)
                    case .errors: state.errors.append(contentsOf: bytes)
                    }
                }
            }
        }
    }

    func text(_ stream: Stream) -> String {
        state.withLock { String(decoding: stream == .output ? $0.output : $0.errors, as: UTF8.self) }
    }

    func end(_ ending: ChildProcess.Ending) {
        state.withLock { $0.ending = ending }
    }
}
