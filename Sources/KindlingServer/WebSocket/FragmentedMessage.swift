import NIOCore

/// A WebSocket message arriving in several frames: none under way, a text message collected so
/// far, or a binary one being skipped.
enum FragmentedMessage {
    case none
    case text(ByteBuffer)
    case binary
}
