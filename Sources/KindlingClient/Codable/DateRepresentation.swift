/// How a `Date` is stored in the database by `JSONValueEncoder` and read back by
/// `JSONValueDecoder` (one type for both, so the two always agree on the choices).
public enum DateRepresentation: Sendable {
    /// Milliseconds since 1970 as a number, the unit of `ServerValue.timestamp()` (the default).
    case millisecondsSince1970
    /// Seconds since 1970 as a number.
    case secondsSince1970
    /// The date's own `Codable` form (seconds since 2001), for data shared with other coders.
    case deferredToDate
}
