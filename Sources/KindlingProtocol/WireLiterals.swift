/// The fixed pieces of Kindling's envelopes, as bytes, for code that writes or scans messages
/// without a JSON parser (the bench's hot paths). They are the protocol's own spelling:
/// `WireCodecTests` checks that `ServerMessage` and `ClientMessage` write exactly these, so a
/// byte scan built on them cannot drift from the codec.
public enum WireLiterals {
    /// How a numbered request (client to server) and a response (server to client) start:
    /// `{"t":"d","d":{"r":`, then the number.
    public static let numberedDataPrefix = Array(#"{"t":"d","d":{"r":"#.utf8)
    /// Between a request's number and its action name: `,"a":"`.
    public static let requestActionKey = Array(#","a":""#.utf8)
    /// Between a request's action name and its body: `","b":`.
    public static let requestBodyKey = Array(#"","b":"#.utf8)
    /// Between a response's number and its status: `,"b":{"s":"`.
    public static let responseStatusKey = Array(#","b":{"s":""#.utf8)
    /// How a push starts: `{"t":"d","d":{"a":"`, then the action.
    public static let pushPrefix = Array(#"{"t":"d","d":{"a":""#.utf8)
    /// Before a push's path: `"b":{"p":"`.
    public static let pushPathKey = Array(#""b":{"p":""#.utf8)
    /// Between a push's path and its data: `","d":`.
    public static let pushDataKey = Array(#"","d":"#.utf8)
    /// How a ping starts: `{"t":"c","d":{"t":"p"`.
    public static let pingPrefix = Array(#"{"t":"c","d":{"t":"p""#.utf8)

    /// Appends `value` in decimal, as `String(value)` spells it (request and response
    /// numbers, without making a `String`).
    public static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        withDecimal(value) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with the decimal spelling of `value` (as `String(value)` spells it), kept on
    /// the stack, so it can be copied into any kind of buffer.
    public static func withDecimal<Result>(_ value: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // a sign and up to 20 digits
        return withUnsafeMutableBytes(of: &digits) { buffer in
            // Written from the end backwards, so the spelling ends where the buffer does.
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            return body(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }
}
