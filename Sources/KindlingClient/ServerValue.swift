import Foundation
import KindlingCore

/// Placeholders the server replaces when it commits a write.
public enum ServerValue {
    /// The server's time in milliseconds since the epoch.
    public static func timestamp() -> JSONValue {
        .object([JSONMember(".sv", .string("timestamp"))])
    }

    /// The number stored at the location plus `delta` (or `delta` when no number is there).
    public static func increment(_ delta: Double) -> JSONValue {
        .object([JSONMember(".sv", .object([JSONMember("increment", .number(delta))]))])
    }

    /// The same for an integer delta (beyond 2^53 it is rounded, as a JSON number holds it).
    public static func increment(_ delta: Int) -> JSONValue { increment(Double(delta)) }

    /// The same for an `NSNumber`, as Firebase's `increment(_:)` takes it.
    public static func increment(_ delta: NSNumber) -> JSONValue { increment(delta.doubleValue) }
}
