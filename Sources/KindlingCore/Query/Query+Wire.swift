extension Query {
    /// Reads the query object of a listen or get (`q`). Missing `sin`/`ein` mean inclusive (older
    /// clients and iOS never send them); a missing start or end name is the sentinel below or above
    /// every key; `vf` defaults as the legacy `limit()` did ("l" with a start, else "r").
    public init(wire: JSONValue) throws(ValidationError) {
        guard case .object = wire else { throw Query.invalid("query must be an object, got \(JSONWriter.string(wire))") }
        self.init()
        if let name = wire["i"] {
            guard let text = name.stringValue else { throw Query.invalid("\"i\" must be a string") }
            index = try Index(wireName: text)
        }
        if let value = wire["sp"] {
            start = QueryBound(
                value: try Query.boundValue(value, index: index),
                name: try Query.boundName(wire["sn"], default: .min),
                inclusive: try Query.flag(wire["sin"], "sin")
            )
        }
        if let value = wire["ep"] {
            end = QueryBound(
                value: try Query.boundValue(value, index: index),
                name: try Query.boundName(wire["en"], default: .max),
                inclusive: try Query.flag(wire["ein"], "ein")
            )
        }
        if let count = wire["l"] {
            guard let number = count.numberValue, number >= 0, number == number.rounded(), number <= Double(QueryLimit.maxCount) else {
                throw Query.invalid("\"l\" must be a non-negative integer")
            }
            let viewFrom = wire["vf"]?.stringValue ?? (start != nil ? "l" : "r")
            guard viewFrom == "l" || viewFrom == "r" else { throw Query.invalid("\"vf\" must be \"l\" or \"r\"") }
            limit = QueryLimit(count: Int(number), fromEnd: viewFrom == "r")
        }
    }

    /// The query object as the SDKs send it (`{}` for the default query).
    public var wireObject: JSONValue {
        var members: [JSONMember] = []
        if let start {
            members.append(JSONMember("sp", start.value.wireJSON))
            if case .key = index {} else if start.name != .min { members.append(JSONMember("sn", .string(start.name.wireText))) }
            members.append(JSONMember("sin", .bool(start.inclusive)))
        }
        if let end {
            members.append(JSONMember("ep", end.value.wireJSON))
            if case .key = index {} else if end.name != .max { members.append(JSONMember("en", .string(end.name.wireText))) }
            members.append(JSONMember("ein", .bool(end.inclusive)))
        }
        if let limit {
            members.append(JSONMember("l", .number(Double(limit.count))))
            members.append(JSONMember("vf", .string(limit.fromEnd ? "r" : "l")))
        }
        if index != .priority { members.append(JSONMember("i", .string(index.description))) }
        return .object(members)
    }

    /// The SDKs' identity for a query: its wire object with keys sorted, or `default`.
    public var identifier: String {
        guard case .object(let members) = wireObject, !members.isEmpty else { return "default" }
        return JSONWriter.string(.object(members.sorted { $0.key < $1.key }))
    }

    static func invalid(_ reason: String) -> ValidationError {
        ValidationError(.invalidQuery, "Invalid query: \(reason)")
    }

    static func boundValue(_ json: JSONValue, index: Index) throws(ValidationError) -> Node {
        switch json {
        case .object, .array:
            // Export form of a primitive ({".value": v, ".priority": p}) is allowed; the priority is not used.
            guard let value = json[".value"], try Node(json: json).isLeaf else {
                throw invalid("a bound must be a JSON primitive, got \(JSONWriter.string(json))")
            }
            return try boundValue(value, index: index)
        case .null where index == .key, .bool where index == .key, .number where index == .key:
            throw invalid("when ordering by key, bounds must be strings")
        default:
            return try Node(json: json)
        }
    }

    static func boundName(_ json: JSONValue?, default fallback: BoundName) throws(ValidationError) -> BoundName {
        guard let json, !json.isNull else { return fallback }
        guard let text = json.stringValue else { throw invalid("a bound's key name must be a string") }
        return BoundName(wireText: text)
    }

    static func flag(_ json: JSONValue?, _ name: String) throws(ValidationError) -> Bool {
        guard let json, !json.isNull else { return true }
        guard let value = json.boolValue else { throw invalid("\"\(name)\" must be a boolean") }
        return value
    }
}

extension Index {
    /// Reads the wire name of an index: `.key`, `.value`, `.priority` or a child path.
    public init(wireName: String) throws(ValidationError) {
        switch wireName {
        case ".key": self = .key
        case ".value": self = .value
        case ".priority": self = .priority
        default:
            let path = try Path(wireName)
            guard !path.isRoot, path.last?.isPriority != true else {
                throw Query.invalid("\(ValidationError.quoted(wireName)) is not a child path to order by")
            }
            self = .child(path)
        }
    }
}

extension Node {
    /// A bound value as JSON (bounds are primitives or null).
    var wireJSON: JSONValue { leaf?.json ?? .null }
}
