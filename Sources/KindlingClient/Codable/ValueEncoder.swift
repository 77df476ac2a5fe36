import Foundation
import KindlingCore

/// The `Encoder` handed to `encode(to:)`: a slot to fill and the path to it.
struct ValueEncoder: Encoder {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    let options: JSONValueEncoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.makeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.makeArray()
        return UnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleContainer(encoder: self) }

    func nested(_ slot: EncodingSlot, key: any CodingKey) -> ValueEncoder {
        ValueEncoder(slot: slot, codingPath: codingPath + [key], options: options)
    }

    /// Stores a value, with the special forms (dates, URLs, raw `JSONValue`s) first.
    func encodeValue(_ value: some Encodable) throws {
        switch value {
        case let json as JSONValue:
            slot.content = .value(json)
        case let date as Date:
            switch options.dateEncodingStrategy {
            case .millisecondsSince1970: try store(date.timeIntervalSince1970 * 1000)
            case .secondsSince1970: try store(date.timeIntervalSince1970)
            case .deferredToDate: try date.encode(to: self)
            }
        case let url as URL:
            slot.content = .value(.string(url.absoluteString))
        default:
            try value.encode(to: self)
        }
    }

    func store(_ number: Double) throws {
        guard number.isFinite else {
            throw EncodingError.invalidValue(
                number, .init(codingPath: codingPath, debugDescription: "JSON has no \(number)"))
        }
        slot.content = .value(.number(number))
    }

    func store<Integer: BinaryInteger>(_ integer: Integer) throws {
        guard let number = Double(exactly: integer) else {
            throw EncodingError.invalidValue(
                integer,
                .init(codingPath: codingPath, debugDescription: "\(integer) is beyond what a JSON number holds exactly (2^53)"))
        }
        slot.content = .value(.number(number))
    }

    func store(_ text: String) { slot.content = .value(.string(text)) }
    func store(_ flag: Bool) { slot.content = .value(.bool(flag)) }
    func storeNull() { slot.content = .value(.null) }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func child(_ key: some CodingKey) -> ValueEncoder {
        encoder.nested(encoder.slot.member(key.stringValue), key: key)
    }

    mutating func encodeNil(forKey key: Key) throws { child(key).storeNull() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { child(key).store(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { child(key).store(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try child(key).store(Double(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try child(key).store(value) }
    mutating func encode(_ value: some Encodable, forKey key: Key) throws { try child(key).encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        child(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        child(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { child(CodingIndexKey.super) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int {
        if case .array(let elements) = encoder.slot.content { return elements.count }
        return 0
    }

    private func next() -> ValueEncoder {
        let key = CodingIndexKey(intValue: count)
        return encoder.nested(encoder.slot.appendElement(), key: key)
    }

    mutating func encodeNil() throws { next().storeNull() }
    mutating func encode(_ value: Bool) throws { next().store(value) }
    mutating func encode(_ value: String) throws { next().store(value) }
    mutating func encode(_ value: Double) throws { try next().store(value) }
    mutating func encode(_ value: Float) throws { try next().store(Double(value)) }
    mutating func encode(_ value: Int) throws { try next().store(value) }
    mutating func encode(_ value: Int8) throws { try next().store(value) }
    mutating func encode(_ value: Int16) throws { try next().store(value) }
    mutating func encode(_ value: Int32) throws { try next().store(value) }
    mutating func encode(_ value: Int64) throws { try next().store(value) }
    mutating func encode(_ value: UInt) throws { try next().store(value) }
    mutating func encode(_ value: UInt8) throws { try next().store(value) }
    mutating func encode(_ value: UInt16) throws { try next().store(value) }
    mutating func encode(_ value: UInt32) throws { try next().store(value) }
    mutating func encode(_ value: UInt64) throws { try next().store(value) }
    mutating func encode(_ value: some Encodable) throws { try next().encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }

    mutating func superEncoder() -> any Encoder { next() }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.storeNull() }
    mutating func encode(_ value: Bool) throws { encoder.store(value) }
    mutating func encode(_ value: String) throws { encoder.store(value) }
    mutating func encode(_ value: Double) throws { try encoder.store(value) }
    mutating func encode(_ value: Float) throws { try encoder.store(Double(value)) }
    mutating func encode(_ value: Int) throws { try encoder.store(value) }
    mutating func encode(_ value: Int8) throws { try encoder.store(value) }
    mutating func encode(_ value: Int16) throws { try encoder.store(value) }
    mutating func encode(_ value: Int32) throws { try encoder.store(value) }
    mutating func encode(_ value: Int64) throws { try encoder.store(value) }
    mutating func encode(_ value: UInt) throws { try encoder.store(value) }
    mutating func encode(_ value: UInt8) throws { try encoder.store(value) }
    mutating func encode(_ value: UInt16) throws { try encoder.store(value) }
    mutating func encode(_ value: UInt32) throws { try encoder.store(value) }
    mutating func encode(_ value: UInt64) throws { try encoder.store(value) }
    mutating func encode(_ value: some Encodable) throws { try encoder.encodeValue(value) }
}
