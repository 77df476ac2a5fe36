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
}
