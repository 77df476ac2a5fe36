import NIOCore

/// Writes as Kindling puts of one path, acked by request number.
struct KindlingWrites: WriteWire {
    /// The put's body up to the value: `{"p":"…","d":`.
    private let prefix: [UInt8]

    init(path: String) {
        prefix = Array(#"{"p":"\#(path)","d":"#.utf8)
    }

    func nextNumber(on connection: RealtimeConnection, sent: Int) -> Int {
        connection.nextRequestNumber
    }

    func write(on connection: RealtimeConnection, value fill: (inout [UInt8]) -> Void) {
        var body = prefix
        fill(&body)
        body.append(UInt8(ascii: "}"))
        connection.request("p", body: body)
    }

    func ack(_ message: ByteBuffer) -> (number: Int?, ok: Bool)? {
        guard let response = MessageScan.response(message) else { return nil }
        return (response.number, response.ok)
    }
}
