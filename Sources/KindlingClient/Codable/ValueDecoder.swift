import Foundation
import KindlingCore

/// The `Decoder` handed to `init(from:)`: one value and the path to it.
struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let options: JSONValueDecoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch value {
        case .object(let members):
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, members: members))
        case .array(let elements):
            // The server turns an object keyed 0, 1, … into an array; read it back as that object.
            let members = elements.enumerated().compactMap { offset, element in
                element.isNull ? nil : JSONMember(String(offset), element)
            }
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, members: members))
        default:
            throw mismatch([String: JSONValue].self, "an object")
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch value {
        case .array(let elements):
            return UnkeyedContainer(decoder: self, elements: elements)
        case .null:
            // The database stores no empty array: an absent one is empty.
            return UnkeyedContainer(decoder: self, elements: [])
        case .object(let members):
            guard let elements = Self.elements(indexedBy: members) else { throw mismatch([JSONValue].self, "an array") }
            return UnkeyedContainer(decoder: self, elements: elements)
        default:
            throw mismatch([JSONValue].self, "an array")
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(decoder: self) }

    /// An object whose keys are all array indices, as a dense array with nulls in the gaps; nil
    /// for any other object, or for indices so sparse that a dense array would be a memory bomb
    /// (the server itself returns an array only when more than half the slots are filled).
    static func elements(indexedBy members: [JSONMember]) -> [JSONValue]? {
        var indexed: [(Int, JSONValue)] = []
        for member in members {
            let utf8 = member.key.utf8
            guard !utf8.isEmpty, utf8.count <= 9, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                utf8.count == 1 || utf8.first != UInt8(ascii: "0"), let index = Int(member.key)
            else { return nil }
            indexed.append((index, member.value))
        }
        let count = (indexed.map(\.0).max() ?? -1) + 1
        guard count <= 2 * indexed.count + 1 else { return nil }
        var elements = [JSONValue](repeating: .null, count: count)
        for (index, element) in indexed { elements[index] = element }
        return elements
    }

    func nested(_ value: JSONValue, key: any CodingKey) -> ValueDecoder {
        ValueDecoder(value: value, codingPath: codingPath + [key], options: options)
    }

    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        if value.isNull {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Expected \(expected), found null"))
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected \(expected), found \(value)"))
    }

    /// Reads a value, with the special forms (raw `JSONValue`s, dates, URLs) first.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if type == JSONValue.self, let json = value as? T { return json }
        if type == Date.self, let date = try decodeDate() as? T { return date }
        if type == URL.self {
            guard let url = URL(string: try string()) as? T else { throw mismatch(type, "a URL") }
            return url
        }
        return try T(from: self)
    }

    private func decodeDate() throws -> Date {
        switch options.dateDecodingStrategy {
        case .millisecondsSince1970: return Date(timeIntervalSince1970: try number(Date.self) / 1000)
        case .secondsSince1970: return Date(timeIntervalSince1970: try number(Date.self))
        case .deferredToDate: return try Date(from: self)
        }
    }

    func number(_ type: Any.Type) throws -> Double {
        guard case .number(let number) = value else { throw mismatch(type, "a number") }
        return number
    }

    /// A whole number within `Integer`'s range; anything else is refused rather than trapping.
    func integer<Integer: BinaryInteger>(_ type: Integer.Type) throws -> Integer {
        let number = try number(type)
        guard let integer = Integer(exactly: number) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "\(value) is not a whole number that fits \(type)"))
        }
        return integer
    }

    func float() throws -> Float {
        let number = try number(Float.self)
        let float = Float(number)
        guard float.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(value) does not fit a Float"))
        }
        return float
    }

    func string() throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, "a string") }
        return text
    }

    func bool() throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, "a boolean") }
        return flag
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ValueDecoder
    let members: [JSONMember]
    /// The members by name (UTF-8 bytes, the last of a repeated name winning), so decoding an
    /// object of n members is O(n), not O(n²) (a dictionary of thousands of children). Small
    /// objects are searched in place.
    private let index: [[UInt8]: JSONValue]?
    var codingPath: [any CodingKey] { decoder.codingPath }

    init(decoder: ValueDecoder, members: [JSONMember]) {
        self.decoder = decoder
        self.members = members
        index = members.count > 16 ? Dictionary(members.map { (Array($0.key.utf8), $0.value) }, uniquingKeysWith: { $1 }) : nil
    }

    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

    private func member(_ key: some CodingKey) -> JSONValue? {
        if let index { return index[Array(key.stringValue.utf8)] }
        return members.last { $0.key.utf8.elementsEqual(key.stringValue.utf8) }?.value
    }

    func contains(_ key: Key) -> Bool { member(key) != nil }

    private func child(_ key: some CodingKey) throws -> ValueDecoder {
        guard let value = member(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No \"\(key.stringValue)\""))
        }
        return decoder.nested(value, key: key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { member(key)?.isNull ?? true }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).number(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).float() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).integer(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).integer(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).integer(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).integer(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).integer(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).integer(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).integer(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).integer(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).integer(type) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard member(key) == nil else { return try child(key).decodeValue(type) }
        // The database keeps no empty containers: a model's empty array or dictionary comes back
        // as no key at all, so read the absence as an empty container when the type is one.
        if let absent = try? decoder.nested(.null, key: key).decodeValue(type) { return absent }
        if let absent = try? decoder.nested(.object([]), key: key).decodeValue(type) { return absent }
        throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No \"\(key.stringValue)\""))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder.nested(member(CodingIndexKey.super) ?? .null, key: CodingIndexKey.super) }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder.nested(member(key) ?? .null, key: key) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: ValueDecoder
    let elements: [JSONValue]
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }
    var currentIndex = 0

    init(decoder: ValueDecoder, elements: [JSONValue]) {
        self.decoder = decoder
        self.elements = elements
    }

    private mutating func next(_ type: Any.Type) throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath + [CodingIndexKey(intValue: currentIndex)], debugDescription: "The array has ended"))
        }
        defer { currentIndex += 1 }
        return decoder.nested(elements[currentIndex], key: CodingIndexKey(intValue: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).bool() }
    mutating func decode(_ type: String.Type) throws -> String { try next(type).string() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type).number(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type).float() }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type).integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).integer(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decodeValue(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(type).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([JSONValue].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next(JSONValue.self) }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool() }
    func decode(_ type: String.Type) throws -> String { try decoder.string() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.number(type) }
    func decode(_ type: Float.Type) throws -> Float { try decoder.float() }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
}
