import NIOCore

/// The encoded frames a connection was given since its last flush, joined into one buffer, so
/// a connection that gets many small frames in one loop turn (a pipelining writer's acks, a
/// listener's burst of events) costs SwiftNIO one write instead of one per frame.
///
/// A lone frame is kept as it is (often a fan-out's shared buffer): joining starts with the
/// second, in a buffer of the connection's own. Bytes are copied only up to `limit`: a frame
/// that would take the joined bytes past it ends the join, which is then written as it stands,
/// so a large frame is never copied.
struct JoinedFrames {
    private enum State {
        case empty
        /// One frame, shared with whoever else it was sent to.
        case single(ByteBuffer)
        /// Several frames copied into a buffer of this connection's own.
        case joined(ByteBuffer)
    }

    /// The most bytes copied into one joined buffer.
    static let limit = 16 * 1024

    private var state = State.empty

    var isEmpty: Bool {
        if case .empty = state { return true }
        return false
    }

    /// Adds `frame` after the frames already held. Returns the bytes to write now, before
    /// what is held from then on, when joining `frame` would pass `limit`.
    mutating func add(_ frame: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer? {
        if heldBytes + frame.readableBytes > Self.limit, let held = take() {
            state = .single(frame)
            return held
        }
        switch state {
        case .empty:
            state = .single(frame)
        case .single(let first):
            var own = allocator.buffer(capacity: max(first.readableBytes + frame.readableBytes, 1024))
            own.writeImmutableBuffer(first)
            own.writeImmutableBuffer(frame)
            state = .joined(own)
        case .joined(var own):
            // Let go of the held copy first, so the buffer is written in place.
            state = .empty
            own.writeImmutableBuffer(frame)
            state = .joined(own)
        }
        return nil
    }

    private var heldBytes: Int {
        switch state {
        case .empty: 0
        case .single(let buffer), .joined(let buffer): buffer.readableBytes
        }
    }

    /// Everything held, as one buffer, leaving nothing held.
    mutating func take() -> ByteBuffer? {
        defer { state = .empty }
        switch state {
        case .empty: return nil
        case .single(let buffer), .joined(let buffer): return buffer
        }
    }
}
