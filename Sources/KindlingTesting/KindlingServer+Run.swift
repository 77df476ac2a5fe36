import KindlingServer
import Logging

extension KindlingServer {
    /// Starts a server with `configuration`, runs `body` against it, and shuts it down whether
    /// `body` succeeds or throws, so a failing test leaves no server running.
    public static func run(_ configuration: ServerConfiguration, _ body: (KindlingServer) async throws -> Void) async throws {
        let server = try await KindlingServer.start(configuration)
        do {
            try await body(server)
        } catch {
            try await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }
}

/// Runs `body` against an in-process server on a free port that logs only critical lines, set
/// up as `configure` says, and shut down afterwards (see `KindlingServer.run`).
///
/// The tests' one way to start a server in process: a suite says only how its server differs
/// from the default one.
public func withServer(
    label: String = "kindling-test", _ configure: (inout ServerConfiguration) throws -> Void = { _ in },
    _ body: (KindlingServer) async throws -> Void
) async throws {
    var logger = Logger(label: label)
    logger.logLevel = .critical
    var configuration = ServerConfiguration(port: 0, logger: logger)
    try configure(&configuration)
    try await KindlingServer.run(configuration, body)
}
