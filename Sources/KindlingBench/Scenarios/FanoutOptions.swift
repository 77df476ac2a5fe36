import KindlingProtocol

/// The parameters of a fan-out run.
public struct FanoutOptions: Sendable {
    /// Connections listening on the one path (or subscribed to the one channel).
    public var subscribers: Int
    /// Writes the writer sends.
    public var writes: Int
    /// Writes per second; 0 sends as fast as the window allows.
    public var rate: Double
    /// Writes the writer may be ahead of the subscribers.
    public var window: Int
    /// Bytes of padding in each value (the value is `{"ts":…,"seq":…,"pad":"…"}`).
    public var padding: Int
    /// Show a progress line on standard error.
    public var progress: Bool

    public init(subscribers: Int, writes: Int, rate: Double, window: Int, padding: Int, progress: Bool) {
        self.subscribers = subscribers
        self.writes = writes
        self.rate = rate
        self.window = window
        self.padding = padding
        self.progress = progress
    }

    var parameters: [String: String] {
        [
            "subscribers": "\(subscribers)", "writes": "\(writes)", "rate": rate > 0 ? "\(Int(rate))/s" : "flat out", "window": "\(window)",
            "padding": "\(padding)",
        ]
    }

    /// Appends the value written: a timestamp for the latency, a sequence number, and padding.
    func appendValue(sequence: Int, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"ts":"#.utf8)
        WireLiterals.appendDecimal(Int(MonotonicClock.nanoseconds()), to: &bytes)
        bytes.append(contentsOf: #","seq":"#.utf8)
        WireLiterals.appendDecimal(sequence, to: &bytes)
        bytes.append(contentsOf: #","pad":""#.utf8)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: padding))
        bytes.append(contentsOf: #""}"#.utf8)
    }

    static let timestampKey = Array(#""ts":"#.utf8)
}
