/// The wire-specific half of a writer (`FanoutWriter`, `DurableWriter`): how one write is sent
/// and how its ack is recognised, so the pacing and bookkeeping are written once for Kindling and
/// Redis. Writers are generic over it, so the hot path has no existential or closure context.
protocol WriteWire: SendableMetatype {
    associatedtype Connection: WriteConnection
    associatedtype Message

    /// The number the next write will carry, given the writes sent so far.
    func nextNumber(on connection: Connection, sent: Int) -> Int

    /// Queues one write whose value `fill` appends to the bytes it is given.
    func write(on connection: Connection, value fill: (inout [UInt8]) -> Void)

    /// The ack in `message`: its write's number (nil when acks come in order) and whether it
    /// succeeded; nil when `message` is no ack.
    func ack(_ message: Message) -> (number: Int?, ok: Bool)?
}
