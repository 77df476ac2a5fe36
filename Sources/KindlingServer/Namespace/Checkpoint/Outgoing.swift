import KindlingProtocol

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

        /// How many connections.
        var count: Int {
            switch self {
            case .one: 1
            case .many(let ids): ids.count
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

    /// What is sent: bytes, or the `ok` answer to a request, which nearly every write gets and
    /// which is written straight into its connection's frames (no bytes of its own made first).
    enum Content: Sendable {
        case bytes([UInt8])
        case ok(number: Int)
    }

    var recipients: Recipients
    var content: Content

    init(recipients: [ConnectionID], message: [UInt8]) {
        self.recipients = .many(recipients)
        self.content = .bytes(message)
    }

    init(to connection: ConnectionID, message: [UInt8]) {
        self.recipients = .one(connection)
        self.content = .bytes(message)
    }

    /// The response to request `number` of `connection`.
    init(to connection: ConnectionID, answer: Answer, number: Int) {
        self.recipients = .one(connection)
        switch answer {
        case .ok, .written: self.content = .ok(number: number)
        default: self.content = .bytes(answer.wireResponse(number))
        }
    }

    /// The message's bytes (encoded here for an `ok` answer).
    var message: [UInt8] {
        switch content {
        case .bytes(let bytes): bytes
        case .ok(let number): ServerMessage.response(number, status: .ok)
        }
    }
}
