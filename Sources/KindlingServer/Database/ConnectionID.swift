import Synchronization

/// A client connection's identity within one server process.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    public let value: Int

    private static let counter = Mutex(0)

    /// A fresh, never reused identity.
    public static func next() -> ConnectionID {
        ConnectionID(
            value: counter.withLock { value in
                value += 1
                return value
            })
    }

    public var description: String { "conn-\(value)" }
}

/// Bytes to send, and the connections that get them: a message for many recipients is encoded
/// once and the same bytes go to each.
struct Outgoing: Sendable {
    /// One connection (an answer: every request has one, so it gets no array of its own), or
    /// several (an event).
    enum Recipients: Sendable, Sequence {
        case one(ConnectionID)
        case many([ConnectionID])

        struct Iterator: IteratorProtocol {
            fileprivate var one: ConnectionID?
            fileprivate var many: IndexingIterator<[ConnectionID]>?

            mutating func next() -> ConnectionID? {
                if let id = one {
                    one = nil
                    return id
                }
                return many?.next()
            }
        }

        /// Exactly one connection.
        var isSingle: Bool {
            switch self {
            case .one: true
            case .many(let ids): ids.count == 1
            }
        }

        func makeIterator() -> Iterator {
            switch self {
            case .one(let id): Iterator(one: id, many: nil)
            case .many(let ids): Iterator(one: nil, many: ids.makeIterator())
            }
        }
    }

    var recipients: Recipients
    var message: [UInt8]

    init(recipients: [ConnectionID], message: [UInt8]) {
        self.recipients = .many(recipients)
        self.message = message
    }

    init(to connection: ConnectionID, message: [UInt8]) {
        self.recipients = .one(connection)
        self.message = message
    }
}
