import Foundation
import KindlingCore

extension JSONValue {
    /// The value as Foundation's JSON objects, the form Firebase's `snapshot.value` has:
    /// `NSNull`, `NSNumber` (integral numbers as integers, so they cast to `Int` as well as
    /// `Double`; booleans as booleans), `String`, `[Any]` and `[String: Any]`.
    public var foundationObject: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let value): return NSNumber(value: value)
        case .number(let value):
            if let integer = Int64(exactly: value) { return NSNumber(value: integer) }
            return NSNumber(value: value)
        case .string(let value): return value
        case .array(let elements): return elements.map(\.foundationObject)
        case .object(let members):
            var object: [String: Any] = [:]
            for member in members { object[member.key] = member.value.foundationObject }
            return object
        }
    }

    /// A value from what a Firebase app passes to `setValue` and its kin: `nil`, `NSNull`,
    /// `Bool`, any integer or floating-point type, `NSNumber`, `String`, arrays and
    /// dictionaries of these (keys as strings), `JSONValue` itself, and `ServerValue`'s
    /// placeholders. Anything else is refused with its type named.
    public init(foundationObject value: Any?) throws(DatabaseError) {
        guard let object = Self.unwrapped(value) else {
            self = .null
            return
        }
        if Self.isBoolean(object), let value = object as? Bool {
            self = .bool(value)
            return
        }
        switch object {
        case let value as JSONValue: self = value
        case is NSNull: self = .null
        case let value as String: self = .string(value)
        // Swift's own numbers first, by their type: a cast to `Int` or `Double` would go through
        // `NSNumber` and round an `Int64` beyond 2^53 silently.
        case let value as any BinaryInteger where !(type(of: object) is NSNumber.Type): self = try Self.integer(value)
        case let value as any BinaryFloatingPoint where !(type(of: object) is NSNumber.Type): self = .number(Double(value))
        case let value as NSNumber where type(of: object) is NSNumber.Type: self = try Self.number(value)
        // Numbers in a box (an `AnyObject` holding an `Int`, say).
        case let value as Int: self = try Self.integer(value)
        case let value as Double: self = .number(value)
        case let value as Bool: self = .bool(value)
        case let elements as [Any?]:
            var array: [JSONValue] = []
            for element in elements { array.append(try JSONValue(foundationObject: element)) }
            self = .array(array)
        case let members as [String: Any?]:
            var object: [JSONMember] = []
            for key in members.keys.sorted() { object.append(JSONMember(key, try JSONValue(foundationObject: members[key] ?? nil))) }
            self = .object(object)
        case let members as [AnyHashable: Any?]:
            var object: [JSONMember] = []
            for (key, value) in members {
                guard let name = key.base as? String else { throw .invalidArgument("A key must be a string, not \(type(of: key.base))") }
                object.append(JSONMember(name, try JSONValue(foundationObject: value)))
            }
            self = .object(object.sorted { $0.key < $1.key })
        default:
            throw .invalidArgument("Cannot write a \(type(of: object)): values are nil, NSNull, Bool, numbers, String, arrays and dictionaries")
        }
    }

    /// An integer as a JSON number, refused beyond 2^53 (where a double would round it).
    private static func integer(_ value: some BinaryInteger) throws(DatabaseError) -> JSONValue {
        guard let number = Double(exactly: value), abs(number) <= 9_007_199_254_740_992 else {
            throw .invalidArgument("The integer \(value) is beyond 2^53, which a JSON number holds exactly")
        }
        return .number(number)
    }

    /// An `NSNumber`'s value: integral kinds as integers (refused beyond 2^53), others as doubles.
    private static func number(_ value: NSNumber) throws(DatabaseError) -> JSONValue {
        let kind = String(cString: value.objCType)
        if ["q", "l", "i", "s", "c"].contains(kind) { return try integer(value.int64Value) }
        if ["Q", "L", "I", "S", "C"].contains(kind) { return try integer(value.uint64Value) }
        return .number(value.doubleValue)
    }

    /// The value inside any layers of `Optional` (an `AnyObject?` stored in a dictionary of
    /// `Any`, say); nil when one of them is empty.
    private static func unwrapped(_ value: Any?) -> Any? {
        guard var current = value else { return nil }
        while true {
            let mirror = Mirror(reflecting: current)
            guard mirror.displayStyle == .optional else { return current }
            guard let inner = mirror.children.first?.value else { return nil }
            current = inner
        }
    }

    /// Whether a boxed value is a boolean rather than a number: a Swift `Bool`, or the boolean
    /// kind of `NSNumber` (which casts to `Bool` and to numbers alike).
    private static func isBoolean(_ object: Any) -> Bool {
        type(of: object) == Bool.self || String(describing: type(of: object)) == "__NSCFBoolean"
    }
}
