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
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 20 digits, kept on the stack
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }
}
