/// A value of a rules document as the loader read it: JSON, each value with where it starts, and
/// each string with where its characters start, so that an error inside an expression can be
/// reported at its own line and column.
struct RulesJSON: Sendable {
    enum Kind: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        /// The decoded text; `contentStart` is the byte offset just after the opening quote.
        case string(String, contentStart: Int)
        case array([RulesJSON])
        case object([Member])
    }

    /// One `"key": value` member, with the key's position.
    struct Member: Sendable {
        var key: String
        var keyPosition: RulesSourcePosition
        var value: RulesJSON
    }

    var kind: Kind
    var position: RulesSourcePosition

    /// The JSON type's name, for messages ("got number").
    var typeName: String {
        switch kind {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}
