import NIOCore

/// A handle on one lean connection from async code: run work on its event loop, or close it.
public struct RealtimeLink: Sendable {
    let channel: any Channel
    let connection: NIOLoopBound<RealtimeConnection>

    /// Runs `body` with the connection on its event loop and returns its result.
    public func perform<Result: Sendable>(_ body: @escaping @Sendable (RealtimeConnection) -> Result) async throws -> Result {
        try await channel.eventLoop.submit { [connection] in body(connection.value) }.get()
    }

    /// Closes the socket and waits for it to be closed.
    public func close() async {
        try? await channel.close()
    }
}
