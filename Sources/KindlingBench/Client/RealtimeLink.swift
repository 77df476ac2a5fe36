import KindlingCore
import NIOCore

/// A handle on one lean connection from async code: run work on its event loop, or close it.
public struct RealtimeLink: Sendable {
    let channel: any Channel
    let connection: NIOLoopBound<RealtimeConnection>

    /// Sends a request and returns the whole reply message.
    public func call(_ action: StaticString, body: [UInt8]) async throws -> ByteBuffer {
        try await channel.eventLoop.flatSubmit { [connection] in connection.value.call(action, body: body) }.get()
    }

    /// Sends a request and returns the reply's `b` as JSON, failing unless its status is `ok`.
    public func callOK(_ action: StaticString, body: [UInt8]) async throws -> JSONValue {
        let reply = try await call(action, body: body)
        let message = try JSONParser.parse(Array(reply.readableBytesView))
        guard let answer = message["d"]?["b"], answer["s"]?.stringValue == "ok" else {
            throw BenchError.unexpectedReply(String(buffer: reply))
        }
        return answer["d"] ?? .null
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
