import KindlingCore

/// One refused request, kept by the namespace's state for the log line the namespace writes
/// about it (at `info`, rate-limited).
struct RefusalNote: Sendable {
    var refusal: Refusal
    var action: RequestAction
    var path: Path?
    /// The connection or stream that asked (or whose onDisconnect write ran at its close); nil
    /// for a one-off REST request until the namespace fills in its HTTP connection, and for
    /// forwarded writes and the onDisconnect writes of gone connections.
    var connection: ConnectionID?

    init(_ refusal: Refusal, action: RequestAction, operation: Operation, caller: Caller) {
        self.refusal = refusal
        self.action = action
        switch operation {
        case .listen(let path, _, _, _, _), .unlisten(let path, _), .get(let path, _), .set(let path, _, _), .update(let path, _),
            .push(let path, _), .onDisconnectSet(let path, _), .onDisconnectUpdate(let path, _), .onDisconnectCancel(let path),
            .openStream(let path, _, _):
            self.path = path
        case .authenticate, .refuseCredential, .acknowledge:
            self.path = nil
        }
        self.connection = caller.connection
    }
}
