/// Writes as one Redis command on one key or channel (`SET key v`, `PUBLISH channel v`), acked
/// in order by the reply that command gives on success.
struct RedisWrites: WriteWire {
    private let command: [UInt8]
    private let key: [UInt8]
    /// Success is an integer reply (PUBLISH's receiver count) rather than a simple one (SET's OK).
    private let integerAck: Bool

    init(command: String, key: String, integerAck: Bool) {
        self.command = Array(command.utf8)
        self.key = Array(key.utf8)
        self.integerAck = integerAck
    }

    func nextNumber(on connection: RedisConnection, sent: Int) -> Int {
        sent + 1
    }

    func write(on connection: RedisConnection, value fill: (inout [UInt8]) -> Void) {
        var value: [UInt8] = []
        fill(&value)
        connection.command(command, key, value)
    }

    func ack(_ message: RESPValue) -> (number: Int?, ok: Bool)? {
        switch message {
        case .integer: (nil, integerAck)
        case .simple: (nil, !integerAck)
        default: (nil, false)
        }
    }
}
