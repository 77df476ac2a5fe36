import Foundation
import KindlingCore

/// Turns an `Encodable` model into a `JSONValue`, ready for `setValue`.
///
/// Written here rather than built on Foundation's `JSONEncoder`: that one produces text through
/// `NSNumber` and a dictionary, so object members lose the order the model encodes them in, and
/// a `Double` goes through a formatting step the database does not need. This encoder builds the
/// `JSONValue` directly: members keep their encoding order, every `Double` is stored bit for bit,
/// and an integer that a double cannot hold exactly (beyond 2^53) is refused instead of rounded.
///
/// Firebase conventions: an optional that is `nil` leaves its key out (the synthesized `Codable`
/// uses `encodeIfPresent`), an array is sent as a JSON array (the server stores it as an object
/// keyed `"0"`, `"1"`, …), and a `Date` is a number of milliseconds since 1970, the unit
/// `ServerValue.timestamp()` resolves to (see `dateEncodingStrategy`).
public struct JSONValueEncoder: Sendable {
    /// How a `Date` is written (Foundation's name for it).
    public typealias DateEncodingStrategy = DateRepresentation

    public var dateEncodingStrategy: DateEncodingStrategy

    public init(dateEncodingStrategy: DateEncodingStrategy = .millisecondsSince1970) {
        self.dateEncodingStrategy = dateEncodingStrategy
    }

    /// The value's JSON. Throws `EncodingError.invalidValue` for what JSON cannot hold: a
    /// non-finite double, an integer beyond 2^53, a container left with nothing encoded in it.
    public func encode(_ value: some Encodable) throws(EncodingError) -> JSONValue {
        let root = EncodingSlot()
        do {
            try ValueEncoder(slot: root, codingPath: [], options: self).encodeValue(value)
        } catch let error as EncodingError {
            throw error
        } catch {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(error)", underlyingError: error))
        }
        guard let json = root.json else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "The value encoded nothing"))
        }
        return json
    }
}
