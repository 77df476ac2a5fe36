import NIOCore

/// A WebSocket message arriving in several frames: none under way, a text message collected so
/// far, or a binary one being skipped.
enum FragmentedMessage {
    case none
    case text(ByteBuffer)
    case binary

    /// True while a message's frames are arriving.
    var isUnderWay: Bool {
        if case .none = self { return false }
        return true
    }
}
