import NIOCore

/// What one realtime connection of a scenario does. It lives on the connection's event loop and
/// is called there, so a scenario keeps its per-connection state in plain stored properties with
/// no locks and no task hop per message.
public protocol RealtimeBehaviour: AnyObject {
    /// The server's handshake arrived: the connection may send requests now.
    func ready(_ connection: RealtimeConnection)

    /// One whole message from the server (split messages already joined), its bytes as sent.
    func received(_ message: ByteBuffer, on connection: RealtimeConnection)

    /// The scenario's go signal, once every connection is ready (see `RealtimeLink.start()`).
    func start(_ connection: RealtimeConnection)
}

extension RealtimeBehaviour {
    /// Most behaviours start on `ready`.
    public func start(_ connection: RealtimeConnection) {}
}
