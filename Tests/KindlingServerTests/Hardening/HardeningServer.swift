import KindlingServer
import KindlingTesting
import Logging
import Synchronization

/// An in-process server for the hardening tests, configured per test, with its log lines kept
/// so a test can check what was logged.
enum HardeningServer {
    static func with(
        _ adjust: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (KindlingServer, LogLines) async throws -> Void
    ) async throws {
        let lines = LogLines()
        var logger = Logger(label: "kindling-test") { _ in LineCollector(lines: lines) }
        logger.logLevel = .debug
        var configuration = ServerConfiguration(port: 0, logger: logger)
        adjust(&configuration)
        try await KindlingServer.run(configuration) { try await body($0, lines) }
    }
}

/// Log lines a server wrote.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }

    /// True once a line containing `text` was logged (within `timeout`).
    func waitFor(_ text: String, timeout: Duration = .seconds(10)) async -> Bool {
        _ = try? await eventually(within: timeout, every: .milliseconds(10)) { contains(text) }
        return contains(text)
    }
}

/// Sends each line to a `LogLines`.
struct LineCollector: LogHandler {
    let lines: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(event.level) \(event.message)")
    }
}
