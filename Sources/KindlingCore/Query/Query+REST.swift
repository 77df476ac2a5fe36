extension Query {
    /// The REST query parameters a query may use.
    public static let restParameterNames: Set<String> = [
        "orderBy", "startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast",
    ]

    /// Reads REST query parameters (values already percent-decoded): `orderBy` as a JSON string
    /// (`"$key"`, `"$value"`, `"$priority"` or a child path), bounds as JSON primitives optionally
    /// followed by `,"key"`, limits as non-negative integers. Errors carry the texts the hosted
    /// REST API gives where they are known.
    public init(restParameters: [String: String]) throws(ValidationError) {
        self.init()
        let filters = Query.restParameterNames.subtracting(["orderBy"]).filter { restParameters[$0] != nil }
        guard let orderBy = restParameters["orderBy"] else {
            if !filters.isEmpty { throw Query.restError("orderBy must be defined when other query parameters are defined") }
            return
        }
        guard case .string(let name)? = try? JSONParser.parse(orderBy) else {
            throw Query.restError("orderBy must be a valid JSON encoded path")
        }
        switch name {
        case "$key": index = .key
        case "$value": index = .value
        case "$priority": index = .priority
        default:
            do throws(ValidationError) {
                index = try Index(wireName: name)
            } catch {
                throw Query.restError("orderBy must be a valid JSON encoded path")
            }
        }
        if restParameters["equalTo"] != nil,
            ["startAt", "startAfter", "endAt", "endBefore"].contains(where: { restParameters[$0] != nil })
        {
            throw Query.restError("equalTo cannot be combined with startAt, startAfter, endAt or endBefore")
        }
        if restParameters["startAt"] != nil, restParameters["startAfter"] != nil {
            throw Query.restError("startAt and startAfter cannot be combined")
        }
        if restParameters["endAt"] != nil, restParameters["endBefore"] != nil {
            throw Query.restError("endAt and endBefore cannot be combined")
        }
        if let text = restParameters["startAt"] ?? restParameters["equalTo"] {
            start = try restBound(text, inclusive: true, sentinel: .min)
        }
        if let text = restParameters["startAfter"] { start = try restBound(text, inclusive: false, sentinel: .max) }
        if let text = restParameters["endAt"] ?? restParameters["equalTo"] {
            end = try restBound(text, inclusive: true, sentinel: .max)
        }
        if let text = restParameters["endBefore"] { end = try restBound(text, inclusive: false, sentinel: .min) }
        switch (restParameters["limitToFirst"], restParameters["limitToLast"]) {
        case (.some, .some):
            throw Query.restError("limitToFirst and limitToLast cannot both be defined")
        case (let first?, nil):
            limit = QueryLimit(count: try Query.restLimit(first, "limitToFirst"), fromEnd: false)
        case (nil, let last?):
            limit = QueryLimit(count: try Query.restLimit(last, "limitToLast"), fromEnd: true)
        case (nil, nil):
            break
        }
    }

    /// Reads `value` or `value,"key"`. `sentinel` is the tie-breaking name when no key is given:
    /// below every key for `startAt` and `endBefore`, above for `endAt` and `startAfter`.
    private func restBound(_ text: String, inclusive: Bool, sentinel: BoundName) throws(ValidationError) -> QueryBound {
        let primitiveError = Query.restError("Constraint index field must be a JSON primitive")
        var name = sentinel
        var json = try? JSONParser.parse(text)
        if json == nil, let comma = Query.lastTopLevelComma(text) {
            guard case .string(let key)? = try? JSONParser.parse(String(text[text.utf8.index(after: comma)...])) else {
                throw primitiveError
            }
            name = .key(Key(unchecked: key))
            json = try? JSONParser.parse(String(text[..<comma]))
        }
        // firebase-tools sends an unquoted key after $key ordering (`startAfter=abc`).
        if json == nil, index == .key { json = .string(text) }
        let leaf: Leaf?
        switch json {
        case .null?: leaf = nil
        case .bool(let flag)?: leaf = .bool(flag)
        case .number(let number)?: leaf = .number(number)
        case .string(let string)?: leaf = .string(string)
        default: throw primitiveError
        }
        if index == .key {
            guard case .string? = leaf else {
                throw Query.restError("When ordering by key, startAt, startAfter, endAt, endBefore and equalTo must be strings")
            }
        }
        return QueryBound(value: leaf.map { Node($0) } ?? .empty, name: name, inclusive: inclusive)
    }

    /// The position of a comma outside any string, for `value,"name"`.
    /// Walks UTF-8 bytes, not characters: a quote followed by a combining mark is one
    /// `Character`, but still ends the string.
    private static func lastTopLevelComma(_ text: String) -> String.Index? {
        var inString = false
        var escaped = false
        var found: String.Index?
        let bytes = text.utf8
        for index in bytes.indices {
            let byte = bytes[index]
            if escaped { escaped = false; continue }
            if byte == UInt8(ascii: "\\") && inString { escaped = true; continue }
            if byte == UInt8(ascii: "\"") { inString.toggle() }
            if byte == UInt8(ascii: ",") && !inString { found = index }
        }
        return found
    }

    /// A limit's count: digits only, at most `QueryLimit.maxCount` (the realtime protocol's
    /// bound), so a REST query and a listen accept the same limits.
    private static func restLimit(_ text: String, _ name: String) throws(ValidationError) -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let count = Int(text) else {
            throw restError("\(name) must be a non-negative integer")
        }
        guard count <= QueryLimit.maxCount else {
            throw restError("\(name) must be at most \(QueryLimit.maxCount)")
        }
        return count
    }

    static func restError(_ message: String) -> ValidationError { ValidationError(.invalidQuery, message) }
}
