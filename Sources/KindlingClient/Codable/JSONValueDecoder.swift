import Foundation
import KindlingCore

/// Turns a `JSONValue` (a snapshot's data) into a `Decodable` model.
///
/// The counterpart of `JSONValueEncoder`, and written by hand for the same reasons: it reads the
/// `JSONValue` directly (no detour through text and `NSNumber`), so a `Double` arrives bit for
/// bit, and a number meant for an integer property is checked to be a whole number within the
/// type's range instead of trapping or truncating.
///
/// It reads data the way the Realtime Database stores it:
/// - an object keyed `"0"`, `"1"`, … reads as an array (gaps as nulls), and an array as a
///   dictionary keyed by index, because the server turns one into the other;
/// - a missing key reads as an empty array or dictionary (or a model whose properties are all
///   optional) where the model wants one, because the database never stores an empty container;
///   a missing key elsewhere is `keyNotFound`;
/// - a `Date` is read from milliseconds since 1970 (see `dateDecodingStrategy`).
public struct JSONValueDecoder: Sendable {
    /// How a `Date` is read (Foundation's name for it).
    public typealias DateDecodingStrategy = DateRepresentation

    public var dateDecodingStrategy: DateDecodingStrategy

    public init(dateDecodingStrategy: DateDecodingStrategy = .millisecondsSince1970) {
        self.dateDecodingStrategy = dateDecodingStrategy
    }

    /// The model `value` describes, or a `DecodingError` naming the coding path that did not fit.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from value: JSONValue) throws(DecodingError) -> T {
        do {
            return try ValueDecoder(value: value, codingPath: [], options: self).decodeValue(type)
        } catch let error as DecodingError {
            throw error
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(error)", underlyingError: error))
        }
    }
}
