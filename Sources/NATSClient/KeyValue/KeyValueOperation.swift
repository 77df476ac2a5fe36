/// What an entry records: a value, or a marker that the key was deleted or purged.
public enum KeyValueOperation: String, Sendable, Hashable {
    /// A value was written.
    case put = "PUT"
    /// The key was deleted (history kept).
    case delete = "DEL"
    /// The key was purged (history dropped).
    case purge = "PURGE"
}
