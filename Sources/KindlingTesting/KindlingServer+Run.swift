import KindlingServer

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
