import Dispatch
import Foundation
import KindlingCore
import KindlingProtocol
import Logging
import NIOCore

/// One namespace's state and the serial queue that owns it.
///
/// Every operation on the namespace is a block on its queue, run to completion before the next:
/// writes are totally ordered, each connection's requests are handled in the order they arrived
/// (a Dispatch queue is FIFO, which an actor's task scheduling does not promise), and no state
/// is shared with the network threads. Outputs are encoded once and handed to each
/// connection's outbound sink, which writes on that connection's event loop.
final class Namespace: @unchecked Sendable {
    let name: String
    private let queue: DispatchQueue
    private let logger: Logger
    // Confined to `queue`.
    private var state: NamespaceState
    private var outbounds: [ConnectionID: SubscriberOutbound] = [:]

    init(name: String, logger: Logger) {
        self.name = name
        self.queue = DispatchQueue(label: "kindling.namespace.\(name)")
        var logger = logger
        logger[metadataKey: "namespace"] = "\(name)"
        self.logger = logger
        self.state = NamespaceState(name: name)
    }

    /// Registers a connection and where its messages go.
    func attach(_ connection: ConnectionID, outbound: ConnectionOutbound) {
        queue.async {
            self.state.connect(connection)
            self.outbounds[connection] = .webSocket(outbound)
        }
    }

    /// Handles a connection's inputs, in order, as one block.
    func submit(_ connection: ConnectionID, _ inputs: [SessionInput]) {
        queue.async {
            var out: [Outgoing] = []
            let now = Namespace.now()
            for input in inputs {
                switch input {
                case .request(let request):
                    self.state.handle(request, from: connection, now: now, into: &out)
                case .reject(let number, let status, let message):
                    out.append(Outgoing(recipients: [connection], message: ServerMessage.failure(number, status: status, message: message)))
                }
            }
            self.dispatch(out)
        }
    }

    /// Forgets a connection that ended, running its onDisconnect writes.
    func detach(_ connection: ConnectionID) {
        queue.async {
            self.outbounds[connection] = nil
            var out: [Outgoing] = []
            for problem in self.state.disconnect(connection, now: Namespace.now(), into: &out) {
                self.logger.warning("\(problem)", metadata: ["connection": "\(connection)"])
            }
            self.dispatch(out)
        }
    }

    /// Runs `body` on the namespace's queue with its state, and returns its result.
    func sync<R: Sendable>(_ body: (inout NamespaceState) -> R) -> R {
        queue.sync { body(&state) }
    }

    /// Answers a REST read with the data now at `path` (or the query's window).
    func read(_ path: Path, query: Query, promise: EventLoopPromise<Node>) {
        queue.async {
            promise.succeed(self.state.restRead(path, query: query))
        }
    }

    /// Runs a REST write. Its changes are handed to the listeners' sinks before the promise is
    /// completed, so a client that waits for the HTTP response finds the event already on its way.
    func write(_ request: RESTWrite, promise: EventLoopPromise<RESTWriteOutcome>) {
        queue.async {
            var out: [Outgoing] = []
            let outcome = self.state.restWrite(request, now: Namespace.now(), into: &out)
            self.dispatch(out)
            promise.succeed(outcome)
        }
    }

    /// Registers an event stream; its first event (the whole location) goes out at once.
    func openStream(_ stream: ConnectionID, at path: Path, query: Query, outbound: EventStreamOutbound) {
        queue.async {
            self.outbounds[stream] = .eventStream(outbound)
            self.dispatch(self.state.openStream(stream, at: path, query: query))
        }
    }

    /// Forgets an event stream that ended.
    func closeStream(_ stream: ConnectionID) {
        queue.async {
            self.outbounds[stream] = nil
            self.state.closeStream(stream)
        }
    }

    /// Sends each output to each of its recipients: for realtime connections its bytes split
    /// into frames once, for event streams the bytes as they are (one buffer shared by all).
    private func dispatch(_ out: [Outgoing]) {
        guard !out.isEmpty else { return }
        var perConnection: [ConnectionID: [ByteBuffer]] = [:]
        var order: [ConnectionID] = []
        for outgoing in out {
            var frames: [ByteBuffer]?
            var chunk: ByteBuffer?
            for recipient in outgoing.recipients {
                let buffers: [ByteBuffer]
                switch outbounds[recipient] {
                case .webSocket?:
                    if frames == nil { frames = FrameSplitter.frames(outgoing.message).map { ByteBuffer(bytes: $0) } }
                    buffers = frames!
                case .eventStream?:
                    if chunk == nil { chunk = ByteBuffer(bytes: outgoing.message) }
                    buffers = [chunk!]
                case nil:
                    continue
                }
                if perConnection[recipient] == nil { order.append(recipient) }
                perConnection[recipient, default: []].append(contentsOf: buffers)
            }
        }
        for connection in order {
            switch outbounds[connection] {
            case .webSocket(let outbound)?: outbound.send(perConnection[connection]!)
            case .eventStream(let outbound)?: outbound.send(perConnection[connection]!)
            case nil: break
            }
        }
    }

    /// Milliseconds since the Unix epoch.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// What a connection hands its namespace: a request, or the refusal of one it could not read
/// (answered in order with the others).
enum SessionInput: Sendable {
    case request(Request)
    case reject(number: Int, status: WireStatus, message: String)
}
