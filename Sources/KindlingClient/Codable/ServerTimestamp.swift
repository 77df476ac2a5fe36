import Foundation
import KindlingCore

/// A date the server fills in, for `Codable` models: the counterpart of `ServerValue.timestamp()`.
///
/// ```swift
/// struct CheckIn: Codable {
///     var student: String
///     @ServerTimestamp var at: Date?
/// }
/// try await ref.setValue(from: CheckIn(student: "ada"))   // writes {"student":"ada","at":{".sv":"timestamp"}}
/// let read = try snapshot.data(as: CheckIn.self)           // read.at is the server's time
/// ```
///
/// While the date is nil it encodes as the placeholder `{".sv":"timestamp"}`, which the server
/// replaces with its clock in milliseconds when it commits the write (and the client, until then,
/// with its estimate of that clock). A set date encodes as its milliseconds since 1970. Reading
/// turns the number back into a `Date`; an absent key or a null reads as nil.
@propertyWrapper
public struct ServerTimestamp: Codable, Sendable, Hashable {
    public var wrappedValue: Date?

    public init(wrappedValue: Date?) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        switch try single.decode(JSONValue.self) {
        case .null:
            wrappedValue = nil
        case .number(let milliseconds):
            wrappedValue = Date(timeIntervalSince1970: milliseconds / 1000)
        case ServerValue.timestamp():
            // The placeholder itself (data written by hand, never resolved): no date yet.
            wrappedValue = nil
        case let other:
            throw DecodingError.typeMismatch(
                Date.self, .init(codingPath: decoder.codingPath, debugDescription: "A server timestamp is a number of milliseconds, not \(other)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        if let date = wrappedValue {
            try single.encode(date.timeIntervalSince1970 * 1000)
        } else {
            try single.encode(ServerValue.timestamp())
        }
    }
}

extension KeyedDecodingContainer {
    /// An absent `@ServerTimestamp` key is a nil date, not a missing-key error: the synthesized
    /// `init(from:)` asks for the wrapper by name even when the date is optional.
    public func decode(_ type: ServerTimestamp.Type, forKey key: Key) throws -> ServerTimestamp {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestamp(wrappedValue: nil)
    }
}
