/// How a node is written as JSON.
public enum JSONFormat: Sendable {
    /// What clients read: no priorities, and objects whose keys are 0, 1, 2… rendered as arrays.
    case plain
    /// The export form: priorities included (`.priority`, `.value` for a prioritised leaf), and
    /// never an array, so it reads back to exactly the same tree.
    case export
}

extension Node {
    /// The longest string a leaf may hold, in UTF-8 bytes (10 MB).
    public static let maxStringBytes = 10 * 1024 * 1024

    /// Writes this node as JSON (`null` when empty).
    public func write(to writer: inout JSONWriter, format: JSONFormat = .plain) {
        let storage: NodeStorage
        switch representation {
        case .empty:
            writer.writeNull()
            return
        case .leaf(let leaf):
            writer.write(leaf.json)
            return
        case .packed(let packed):
            Node.writeChildren(packed, count: packed.count, lastKey: nil, priority: nil, to: &writer, format: format)
            return
        case .shared(let shared):
            storage = shared
        }
        switch storage.content {
        case .leaf(let leaf):
            if format == .export, let priority = storage.priority {
                writer.writeRaw("{\".value\":".utf8)
                writer.write(leaf.json)
                writer.writeRaw(",\".priority\":".utf8)
                writer.write(Leaf(priority).json)
                writer.writeRaw("}".utf8)
            } else {
                writer.write(leaf.json)
            }
        case .children(let map):
            Node.writeChildren(map, count: map.count, lastKey: map.last?.key, priority: storage.priority, to: &writer, format: format)
        }
    }

    /// Writes a parent's children, in key order, as an object or (plain format only) an array.
    private static func writeChildren(
        _ children: some Sequence<(key: Key, node: Node)>,
        count: Int,
        lastKey: Key?,
        priority: Priority?,
        to writer: inout JSONWriter,
        format: JSONFormat
    ) {
        if format == .plain, let length = arrayLength(children, count: count, lastKey: lastKey) {
            writer.writeRaw("[".utf8)
            var next = 0
            for (key, child) in children {
                let index = Int(key.integerValue!)
                while next < index {
                    writer.writeRaw(next == 0 ? "null".utf8 : ",null".utf8)
                    next += 1
                }
                if next > 0 { writer.writeRaw(",".utf8) }
                child.write(to: &writer, format: format)
                writer.spillIfFull()
                next += 1
            }
            assert(next == length)
            writer.writeRaw("]".utf8)
            return
        }
        writer.writeRaw("{".utf8)
        var first = true
        for (key, child) in children {
            if !first { writer.writeRaw(",".utf8) }
            first = false
            writer.write(key.string)
            writer.writeRaw(":".utf8)
            child.write(to: &writer, format: format)
            writer.spillIfFull()
        }
        if format == .export, let priority {
            writer.writeRaw(",\".priority\":".utf8)
            writer.write(Leaf(priority).json)
        }
        writer.writeRaw("}".utf8)
    }

    /// This node as JSON text.
    public func jsonText(format: JSONFormat = .plain) -> String {
        var writer = JSONWriter()
        write(to: &writer, format: format)
        return writer.text
    }

    /// The array length when every key is a canonical non-negative integer (`0` or no leading
    /// zero) and the largest is below twice the number of children: the SDKs' array rule.
    /// `children` come in key order, so integer keys come first and ascending, and the walk
    /// stops at the first key that rules an array out; `lastKey`, when a big map can give it
    /// cheaply, rules most objects out before any walk.
    static func arrayLength(_ children: some Sequence<(key: Key, node: Node)>, count: Int, lastKey: Key?) -> Int? {
        if let lastKey, !(lastKey.integerValue.map { $0 >= 0 && Int($0) < 2 * count } ?? false) { return nil }
        var last: Int32?
        for (key, _) in children {
            guard let value = key.integerValue, value >= 0, Int(value) < 2 * count,
                key.string.utf8.count == String(value).utf8.count
            else { return nil }
            last = value
        }
        return last.map { Int($0) + 1 }
    }
}

extension Node {
    /// Builds a node from JSON as a client wrote it, validating every key, string, number and
    /// priority, for storage at `path`.
    ///
    /// Arrays become children keyed `0`, `1`… (null elements dropped); `{".value": v,
    /// ".priority": p}` is a prioritised value; objects that end up with no children are empty.
    /// Server values (`.sv`) are resolved against `existing`, the data now at `path`, with
    /// `serverValues`; without it they are refused.
    public init(
        json: JSONValue,
        at path: Path = .root,
        existing: Node = .empty,
        serverValues: ServerValues? = nil
    ) throws(ValidationError) {
        self = try NodeDecoder(serverValues: serverValues, existing: existing, base: path).decode(json, path: path)
    }

    /// Parses JSON text into a node (no server values allowed).
    public init(jsonText: String) throws(ValidationError) {
        try self.init(json: JSONParser.parse(jsonText))
    }
}

/// Turns client JSON into nodes: the validation rules and the `.value`/`.priority`/`.sv` forms.
struct NodeDecoder {
    let serverValues: ServerValues?
    /// The data now at `base`; only server values look into it, so plain writes never search it.
    let existing: Node
    let base: Path

    /// Where the decoder is: the path it started at, and the keys it went down by since (a
    /// stack, so no path is made per node; one is made only for a message or a server value).
    struct Location {
        let start: Path
        var keys: [Key] = []

        var path: Path { keys.isEmpty ? start : start.appending(Path(keys: keys)) }
    }

    /// The data now at `location` (at or below `base`).
    private func existing(at location: Location) -> Node {
        existing.child(at: location.start.dropFirst(base.count).appending(Path(keys: location.keys)))
    }

    func decode(_ json: JSONValue, path: Path) throws(ValidationError) -> Node {
        var location = Location(start: path)
        return try decode(json, &location)
    }

    private func decode(_ json: JSONValue, _ location: inout Location) throws(ValidationError) -> Node {
        switch json {
        case .null:
            return .empty
        case .bool, .number, .string:
            return Node(try leaf(json, location), priority: nil)
        case .array(let elements):
            var map = ChildMap()
            for (index, element) in elements.enumerated() where !element.isNull {
                let key = Key(unchecked: String(index))
                try descend(&location, key)
                defer { location.keys.removeLast() }
                map.set(key, try decode(element, &location))
            }
            return Node(map: map, priority: nil)
        case .object(let members):
            return try decodeObject(members, &location)
        }
    }

    private func decodeObject(_ members: [JSONMember], _ location: inout Location) throws(ValidationError) -> Node {
        var priorityJSON: JSONValue?
        var valueJSON: JSONValue?
        var serverValueJSON: JSONValue?
        // Members usually arrive in key order (Kindling writes them so): collect them and build
        // the map in one pass, falling back to inserts when they do not.
        var entries: [(key: Key, node: Node)] = []
        entries.reserveCapacity(members.count)
        var sorted = true
        for member in members {
            switch member.key {
            case ".priority": priorityJSON = member.value
            case ".value": valueJSON = member.value
            case ".sv": serverValueJSON = member.value
            default:
                let key: Key
                do throws(ValidationError) {
                    key = try Key(member.key)
                } catch {
                    throw ValidationError(error.kind, "\(error.message) at \(location.path.child(Key(unchecked: member.key)))")
                }
                try descend(&location, key)
                defer { location.keys.removeLast() }
                if let last = entries.last, Key.compare(last.key, key) >= 0 { sorted = false }
                entries.append((key, try decode(member.value, &location)))
            }
        }
        let priority = try priorityJSON.flatMap { json throws(ValidationError) in
            try decodePriority(json, location)
        }
        if let serverValueJSON {
            guard valueJSON == nil, entries.isEmpty else {
                throw ValidationError(.invalidData, "Data at \(location.path) has \".sv\" beside other keys")
            }
            let resolved = try resolve(serverValueJSON, path: location.path, existing: existing(at: location).leaf)
            return Node(resolved, priority: priority)
        }
        if let valueJSON, !valueJSON.isNull {
            guard entries.isEmpty else {
                // Still in the members' order: the first child key the client gave.
                throw ValidationError(
                    .invalidData,
                    "Data at \(location.path) contains \".value\" in addition to actual children (\(ValidationError.quoted(entries[0].key.string)))"
                )
            }
            return try decode(valueJSON, &location).withPriority(priority)
        }
        if !sorted, entries.count <= PackedLeaves.maxCount {
            // Clients send members in their own order: a small object (a record) is put in key
            // order here, the last of a repeated key winning, so it can be packed directly.
            entries = NodeDecoder.inKeyOrder(entries)
            sorted = true
        }
        var map: ChildMap
        if sorted {
            if priority == nil, let packed = PackedLeaves.pack(entries) { return Node(representation: .packed(packed)) }
            map = ChildMap(sortedEntries: entries)
        } else {
            map = ChildMap()
            for (key, node) in entries { map.set(key, node) }
        }
        return Node(map: map, priority: priority)
    }

    /// `entries` (a record's few members) sorted by key, keeping only the last entry of a
    /// repeated key (as setting them one by one would). An insertion sort in place: stable, and
    /// for at most `PackedLeaves.maxCount` entries cheaper than a general sort's copies.
    private static func inKeyOrder(_ entries: [(key: Key, node: Node)]) -> [(key: Key, node: Node)] {
        var ordered = entries
        for index in ordered.indices.dropFirst() {
            let entry = ordered[index]
            var slot = index
            while slot > 0, Key.compare(ordered[slot - 1].key, entry.key) > 0 {
                ordered[slot] = ordered[slot - 1]
                slot -= 1
            }
            ordered[slot] = entry
        }
        var unique = 0
        for index in ordered.indices {
            let entry = ordered[index]
            if unique > 0, ordered[unique - 1].key == entry.key {
                ordered[unique - 1] = entry
            } else {
                ordered[unique] = entry
                unique += 1
            }
        }
        ordered.removeLast(ordered.count - unique)
        return ordered
    }

    /// Goes down by `key`, refusing a path deeper than the limit; the caller goes back up.
    private func descend(_ location: inout Location, _ key: Key) throws(ValidationError) {
        guard location.start.count + location.keys.count < Path.maxDepth else {
            throw .tooDeep(location.path.child(key).description)
        }
        location.keys.append(key)
    }

    private func leaf(_ json: JSONValue, _ location: Location) throws(ValidationError) -> Leaf {
        switch json {
        case .bool(let flag): return .bool(flag)
        case .number(let number):
            guard number.isFinite else { throw ValidationError(.invalidNumber, "Number at \(location.path) is not finite") }
            return .number(number)
        case .string(let text):
            guard text.utf8.count <= Node.maxStringBytes else {
                throw ValidationError(
                    .stringTooLong,
                    "String at \(location.path) is \(text.utf8.count) bytes; the limit is \(Node.maxStringBytes) bytes of UTF-8"
                )
            }
            return .string(text)
        default: preconditionFailure("Internal inconsistency: not a primitive")
        }
    }

    private func decodePriority(_ json: JSONValue, _ location: Location) throws(ValidationError) -> Priority? {
        let path = location.path
        switch json {
        case .null: return nil
        case .number(let number) where number.isFinite: return .number(number)
        case .string(let text): return .string(text)
        case .object(let members) where members.count == 1 && members[0].key == ".sv":
            let resolved = try resolve(members[0].value, path: path, existing: existing(at: location).priority.map(Leaf.init))
            return Priority(resolved)
        default:
            throw ValidationError(
                .invalidPriority,
                "Priority at \(path) must be a string, a finite number, a server value or null; got \(JSONWriter.string(json))"
            )
        }
    }

    private func resolve(_ json: JSONValue, path: Path, existing: Leaf?) throws(ValidationError) -> Leaf {
        guard let serverValues else {
            throw ValidationError(.invalidServerValue, "Server value at \(path) is not allowed here")
        }
        return try serverValues.resolve(json, existing: existing, path: path)
    }
}
