import NIOCore

/// Where a namespace sends one subscriber's outputs. Realtime connections take WebSocket frames;
/// event streams take the server-sent-event bytes as they are. An enum rather than a protocol,
/// so the WebSocket path stays a direct call.
enum SubscriberOutbound: Sendable {
    case webSocket(ConnectionOutbound)
    case eventStream(EventStreamOutbound)
}
