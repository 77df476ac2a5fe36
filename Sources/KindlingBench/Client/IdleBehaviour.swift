import NIOCore

/// A connection that only makes calls through its link (set-up, read-back) or sits idle.
public final class IdleBehaviour: RealtimeBehaviour {
    public init() {}
    public func ready(_ connection: RealtimeConnection) {}
    public func received(_ message: ByteBuffer, on connection: RealtimeConnection) {}
}
