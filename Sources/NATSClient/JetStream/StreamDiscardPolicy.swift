/// What a stream does when a limit is reached.
public enum StreamDiscardPolicy: String, Sendable, Codable {
    /// Drop the oldest messages.
    case old
    /// Refuse new messages (key-value buckets use this).
    case new
}
