import NIOCore

/// One RESP2 reply or push from Redis.
public enum RESPValue: Sendable, Equatable {
    case simple(String)
    case error(String)
    case integer(Int)
    /// A bulk string; nil is the null bulk string.
    case bulk(ByteBuffer?)
    /// An array; nil is the null array.
    case array([RESPValue]?)
}
