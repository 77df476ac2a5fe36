import KindlingCore
import KindlingProtocol
import NIOCore

/// A handle on one lean connection from async code: run work on its event loop, or close it.
public struct RealtimeLink: Sendable {
    let channel: any Channel
    let connection: NIOLoopBound<RealtimeConnection>

    /// Sends a request and returns the whole reply message.
    public func call(_ action: Action) async throws -> ByteBuffer {
        try await channel.eventLoop.flatSubmit { [connection] in connection.value.call(action) }.get()
    }

    /// Sends a request and returns the reply's `b` as JSON, failing unless its status is `ok`.
    public func callOK(_ action: Action) async throws -> JSONValue {
        let reply = String(buffer: try await call(action))
        guard case .response(let response) = try ServerEnvelope.decode(reply), response.isOK else {
            throw BenchError.unexpectedReply(reply)
        }
        return response.data
    }

    /// Gives the behaviour its go signal on the event loop.
    public func start() {
        channel.eventLoop.execute { [connection] in connection.value.start() }
    }

    /// Closes the socket and waits for it to be closed.
    public func close() async {
        try? await channel.close()
    }
}
