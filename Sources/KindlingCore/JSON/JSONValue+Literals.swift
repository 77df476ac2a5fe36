/// Literal syntax, so a value reads like the JSON it is:
/// `let spot: JSONValue = ["free": 3, "name": "Library", "tags": ["quiet"], "closed": nil]`.
///
/// A dictionary literal keeps its members in the order written (a Swift `Dictionary` would not),
/// so the JSON written back out is the JSON written in the source.
extension JSONValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(elements.map { JSONMember($0.0, $0.1) })
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// An integer literal becomes its double; literals beyond 2^53 round as JavaScript's would.
    public init(integerLiteral value: Int) {
        self = .number(Double(value))
    }
}

extension JSONValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) {
        self = .number(value)
    }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// `nil` in a literal is JSON `null` (which, written to the database, removes the location).
    public init(nilLiteral: ()) {
        self = .null
    }
}
