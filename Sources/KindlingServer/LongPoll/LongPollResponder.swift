import NIOCore

/// How a long-polling session answers one held request: the HTTP connection's handler writes the
/// script on its own event loop, whichever loop the session lives on.
struct LongPollResponder: Sendable {
    let eventLoop: any EventLoop
    let write: @Sendable ([UInt8]) -> Void

    /// Answers with `script` (on the request's loop).
    func answer(_ script: [UInt8]) {
        eventLoop.execute { write(script) }
    }
}
