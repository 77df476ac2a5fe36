/// The parameters of a dive-buddy chat run.
public struct ChatOptions: Sendable {
    /// Conversations, each between two users (two connections).
    public var pairs: Int
    /// Messages each user has in flight: sent at the start, then one reply per message received.
    public var window: Int
    /// Characters of text in each message.
    public var textLength: Int
    /// How long users keep replying.
    public var duration: Duration
    /// Show a progress line on standard error.
    public var progress: Bool

    public init(pairs: Int, window: Int, textLength: Int, duration: Duration, progress: Bool) {
        self.pairs = pairs
        self.window = window
        self.textLength = textLength
        self.duration = duration
        self.progress = progress
    }

    var parameters: [String: String] {
        ["pairs": "\(pairs)", "window": "\(window)", "text": "\(textLength)", "seconds": "\(duration.seconds)"]
    }
}
