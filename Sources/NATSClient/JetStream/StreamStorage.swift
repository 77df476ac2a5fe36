/// Where a stream keeps its messages.
public enum StreamStorage: String, Sendable, Codable {
    /// On disk: survives server restarts (what a replicated log needs).
    case file
    /// In memory: faster, lost when the server stops.
    case memory
}
