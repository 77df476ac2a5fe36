import ArgumentParser
import Dispatch
import Foundation
import KindlingCore
import KindlingServer
import Synchronization

/// `kindling profile`: records a namespace's operations from its profiler stream for a while,
/// then prints the report `firebase database:profile` prints (speed, bandwidth, unindexed
/// queries), or the records themselves; or reports on records saved before.
struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Record a namespace's operations, then print their speed, bandwidth and unindexed queries (admin; KINDLING_ADMIN_SECRET).",
        discussion: """
            The report is the one `firebase database:profile` prints, from the same records (the \
            server's /.settings/profile.json stream). Recording stops after --duration, or at \
            Enter or Ctrl-C without one. Paths with 25 or more siblings are folded into $wildcard \
            unless --no-collapse.
            Exit codes: 0 ok, 1 refused by the server, 2 server unreachable, 64 bad arguments.
            Examples:
              kindling profile --ns chat --duration 30s
              kindling profile --ns chat --duration 2m --raw > chat-ops.jsonl
              kindling profile --input chat-ops.jsonl --json
            """
    )

    @OptionGroup var remote: RemoteOptions

    @Option(name: [.customShort("d"), .long], help: "How long to record: seconds (30) or with a unit (30s, 5m, 1h).")
    var duration: String?

    @Flag(help: "Print the records as they came, one JSON object a line (what --input reads), instead of the report.")
    var raw = false

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Option(name: [.customShort("i"), .long], help: "Report on a file of records saved with --raw, instead of recording.")
    var input: String?

    @Option(name: [.customShort("o"), .long], help: "Write the report (or the records) to this file instead of standard output.")
    var output: String?

    @Flag(inversion: .prefixedNo, help: "Fold paths with 25 or more siblings into $wildcard.")
    var collapse = true

    /// `--duration`: seconds, or a whole number with `s`, `m` or `h`.
    static func parseDuration(_ text: String) -> Duration? {
        if let seconds = Int64(text) { return .seconds(seconds) }
        return DurationText.parse(text)
    }

    func validate() throws {
        if raw, input != nil { throw ValidationError("Give --raw or --input, not both: a file of raw records is already what --raw prints.") }
        if raw, json { throw ValidationError("Give --raw or --json, not both.") }
        if input != nil, duration != nil { throw ValidationError("--duration is for recording; --input reports on records saved before.") }
        if let duration {
            guard let span = Self.parseDuration(duration) else {
                throw ValidationError("--duration must be seconds (30) or a whole number with s, m or h (30s, 5m, 1h).")
            }
            guard span > .zero else { throw ValidationError("--duration must be more than zero.") }
        }
    }

    func run() async throws {
        if let input {
            guard let file = FileHandle(forReadingAtPath: input) else { throw ValidationError("Cannot read \(input).") }
            defer { try? file.close() }
            var report = ProfileReport()
            try Self.forEachLine(of: file) { report.add(line: $0) }
            try write(render(report))
            return
        }
        let target = try remote.target()
        let url = try target.settingsURL("profile")
        // The raw records go out as they come (to the file, or standard output); a report is
        // added up as they come. Either way nothing grows with the recording's length.
        var rawOutput: FileHandle?
        if raw {
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: nil), let file = FileHandle(forWritingAtPath: output) else {
                    throw ValidationError("Cannot write \(output).")
                }
                rawOutput = file
            } else {
                rawOutput = FileHandle.standardOutput
            }
        }
        let recording = ProfileRecording(raw: rawOutput, progress: ProgressLine(hint: duration == nil ? " Press Enter to stop." : ""))
        let stop = try await record(from: url, into: recording)
        if case .ended(let reason) = stop {
            printError("profile: the server ended the stream\(reason.map { " (\($0))" } ?? "")")
        }
        if let rawOutput, rawOutput !== FileHandle.standardOutput { try? rawOutput.close() }
        if !raw { try write(render(recording.report)) }
    }

    /// Calls `body` with each line of `file` (without its `\n`), reading a megabyte at a time.
    static func forEachLine(of file: FileHandle, _ body: (ArraySlice<UInt8>) -> Void) throws {
        var pending: [UInt8] = []
        while let chunk = try file.read(upToCount: 1 << 20), !chunk.isEmpty {
            pending.append(contentsOf: chunk)
            var start = pending.startIndex
            while let end = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                body(pending[start..<end])
                start = end + 1
            }
            pending.removeSubrange(..<start)
        }
        if !pending.isEmpty { body(pending[...]) }
    }

    /// The report as `--json` or text asks, coloured for a terminal.
    private func render(_ report: ProfileReport) -> String {
        if json { return report.json(collapse: collapse) + "\n" }
        let colour = output == nil && isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        return report.text(collapse: collapse, colour: colour)
    }

    private func write(_ text: String) throws {
        guard let output else {
            FileHandle.standardOutput.write(Data(text.utf8))
            return
        }
        guard FileManager.default.createFile(atPath: output, contents: Data(text.utf8)) else { throw ValidationError("Cannot write \(output).") }
    }

    /// Records until the duration passes, the user stops it, or the server ends the stream.
    private func record(from url: URL, into recording: ProfileRecording) async throws -> ProfileCollector.Stop {
        let (stops, stop) = AsyncStream<ProfileCollector.Stop>.makeStream()
        let timer = duration.flatMap(Self.parseDuration).map { span in
            Task {
                try await Task.sleep(for: span)
                stop.yield(.elapsed)
            }
        }
        let signals = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.yield(.asked) }
            source.resume()
            return source
        }
        if duration == nil {
            // Enter stops it; standard input that ends (a script's /dev/null) leaves Ctrl-C.
            Thread.detachNewThread {
                if readLine() != nil { stop.yield(.asked) }
            }
        }
        defer {
            timer?.cancel()
            for source in signals { source.cancel() }
        }
        do {
            let stopped = try await ProfileCollector(url: url).record(until: stops) { recording.take($0) }
            recording.progress.finish()
            return stopped
        } catch {
            switch error {
            case .unreachable(let reason):
                printError("error: cannot reach \(url.host ?? "the server"):\(url.port.map(String.init) ?? ""): \(reason)")
                throw ClientExit.unreachable
            case .refused(let status, let message):
                printError("error: the server answered \(status): \(message)")
                throw ClientExit.refused
            }
        }
    }
}

/// What `kindling profile` does with each event as it comes: with `raw`, writes its data as a
/// line there; else adds its record to the report. Counts the operations for the progress line.
final class ProfileRecording: Sendable {
    private let raw: FileHandle?
    let progress: ProgressLine
    private let state = Mutex<(report: ProfileReport, operations: Int)>((ProfileReport(), 0))

    init(raw: FileHandle?, progress: ProgressLine) {
        self.raw = raw
        self.progress = progress
    }

    /// The report of the records taken so far.
    var report: ProfileReport { state.withLock { $0.report } }

    func take(_ event: ServerSentEvents.Event) {
        let record = raw == nil ? try? JSONParser.parse(event.data) : nil
        let operations = state.withLock { state in
            if let record { state.report.add(record) }
            if event.name == "log" { state.operations += 1 }
            return state.operations
        }
        raw?.write(Data((event.data + "\n").utf8))
        if event.name == "log" { progress.show(operations) }
    }
}

/// The count of operations recorded, on standard error: a line rewritten in place on a
/// terminal (at most ten times a second), and the total once recording stops.
final class ProgressLine: Sendable {
    private let hint: String
    private let terminal = isatty(STDERR_FILENO) == 1
    private let state = Mutex<(count: Int, shown: ContinuousClock.Instant?)>((0, nil))

    init(hint: String) { self.hint = hint }

    func show(_ count: Int) {
        let line: String? = state.withLock { state in
            state.count = count
            let now = ContinuousClock.now
            guard terminal, state.shown.map({ now - $0 >= .milliseconds(100) }) ?? true else { return nil }
            state.shown = now
            return "\r\(count) operations recorded.\(hint)"
        }
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    func finish() {
        let count = state.withLock { $0.count }
        let line = "\(count) operations recorded."
        FileHandle.standardError.write(Data((terminal ? "\r" + line + "\u{1B}[K\n" : line + "\n").utf8))
    }
}
