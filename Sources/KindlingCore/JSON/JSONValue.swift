/// Parsed JSON exactly as it arrived: numbers as doubles parsed with correct rounding, strings with
/// their exact characters, object members in their original order (duplicates included).
///
/// Foundation's JSON types reorder members and reformat numbers; the wire needs neither, so the
/// core parses and writes JSON itself.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// The member named `key` (the last one, when a name repeats), compared by UTF-8 bytes.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        // Count and first byte first: they settle almost every mismatch without iterating.
        let utf8 = key.utf8
        let count = utf8.count, first = utf8.first
        // The protocol's member names are one letter: count and first byte are the whole test.
        return members.last { member in
            let name = member.key.utf8
            return name.count == count && name.first == first && (count == 1 || name.elementsEqual(utf8))
        }?.value
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(l), .bool(r)): return l == r
        case let (.number(l), .number(r)): return l.bitPattern == r.bitPattern
        case let (.string(l), .string(r)): return l.utf8.elementsEqual(r.utf8)
        case let (.array(l), .array(r)): return l == r
        case let (.object(l), .object(r)): return l == r
        default: return false
        }
    }
}

/// One `"key": value` member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }

    public static func == (lhs: JSONMember, rhs: JSONMember) -> Bool {
        lhs.key.utf8.elementsEqual(rhs.key.utf8) && lhs.value == rhs.value
    }
}
