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
    private var outbounds: [ConnectionID: ConnectionOutbound] = [:]

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
            self.outbounds[connection] = outbound
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

    /// Sends each output's bytes, encoded into frames once, to each of its recipients.
    private func dispatch(_ out: [Outgoing]) {
        guard !out.isEmpty else { return }
        var perConnection: [ConnectionID: [ByteBuffer]] = [:]
        var order: [ConnectionID] = []
        for outgoing in out {
            let frames = FrameSplitter.frames(outgoing.message).map { ByteBuffer(bytes: $0) }
            for recipient in outgoing.recipients {
                if perConnection[recipient] == nil { order.append(recipient) }
                perConnection[recipient, default: []].append(contentsOf: frames)
            }
        }
        for connection in order {
            outbounds[connection]?.send(perConnection[connection]!)
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
