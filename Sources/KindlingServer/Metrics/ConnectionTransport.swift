/// How a client is connected, the `transport` label of the connection metrics.
enum ConnectionTransport: String, Sendable, CaseIterable {
    /// A realtime WebSocket at `/.ws`.
    case websocket
    /// A realtime session over a browser's long-polling requests at `/.lp` (until it moves to
    /// a WebSocket).
    case longpoll
    /// A REST event stream (`Accept: text/event-stream`), counted while it streams.
    case sse
    /// A plain HTTP connection that served at least one REST request (not a stream).
    case rest
}
