import NIOCore

extension EventLoopFuture where Value == Void {
    /// Once this write is done, closes `context`'s connection (`mode`), or all of it when the
    /// write failed; completes when the close has.
    func closing(_ mode: CloseMode, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let closed = context.eventLoop.makePromise(of: Void.self)
        assumeIsolated().whenComplete { result in
            guard case .success = result else { return context.close(promise: closed) }
            context.close(mode: mode, promise: closed)
        }
        return closed.futureResult
    }
}
