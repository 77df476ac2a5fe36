import KindlingBench
import KindlingServer
import Logging

/// Runs `body` against a Kindling server in this process (in memory, quiet logs).
func withInProcessServer<Result>(_ body: (BenchTarget) async throws -> Result) async throws -> Result {
    var logger = Logger(label: "kindling-bench-tests")
    logger.logLevel = .critical
    let server = try await KindlingServer.start(ServerConfiguration(port: 0, logger: logger))
    do {
        let result = try await body(BenchTarget(host: "127.0.0.1", port: server.port))
        try await server.shutdown()
        return result
    } catch {
        try await server.shutdown()
        throw error
    }
}
