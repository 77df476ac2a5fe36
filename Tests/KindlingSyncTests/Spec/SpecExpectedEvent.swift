@testable import KindlingCore
@testable import KindlingSync

/// An event a sync-point scenario expects, and the two ways the JavaScript harness compares
/// events with it.
struct SpecExpectedEvent {
    /// A `prevName` as JavaScript sees it: absent (`undefined`), `null`, or a name. The harness
    /// compares them strictly, so `undefined` and `null` differ.
    enum PrevName: Equatable {
        case absent
        case null
        case name(String)
    }

    var kind: EventKind
    /// The listen path, as written in the scenario (the run's prefix not yet added).
    var path: String
    var name: String?
    var prevName: PrevName
    /// The expected data's hash; the harness compares snapshots by hash only.
    var hash: String

    init(_ json: JSONValue) throws(SpecError) {
        guard case .object(let members) = json else { throw SpecError("an expected event must be an object") }
        for member in members where !["type", "path", "name", "prevName", "data"].contains(member.key) {
            throw SpecError("unexpected property \"\(member.key)\" in an expected event")
        }
        guard let type = json["type"]?.stringValue,
            let kind = EventKind.allCases.first(where: { $0.name == type })
        else { throw SpecError("unknown event type in \(JSONWriter.string(json))") }
        self.kind = kind
        path = json["path"]?.stringValue ?? ""
        name = json["name"]?.stringValue
        switch json["prevName"] {
        case nil: prevName = .absent
        case .null?: prevName = .null
        case .string(let text)?: prevName = .name(text)
        default: throw SpecError("prevName must be a string or null")
        }
        do {
            hash = try SpecData.node(json["data"] ?? .null).hash
        } catch {
            throw SpecError("expected data \(JSONWriter.string(json["data"] ?? .null)) is not valid: \(error)")
        }
    }

    /// The `prevName` an actual event shows to JavaScript: `undefined` for removals and values.
    static func prevName(of event: Event) -> PrevName {
        switch event.kind {
        case .childAdded, .childChanged, .childMoved:
            return event.previousSibling.map { .name($0.string) } ?? .null
        default:
            return .absent
        }
    }

    /// `eventEquals`: the type, for child events the name and the `prevName`, then the hash.
    func exactlyMatches(_ event: Event) -> Bool {
        guard event.kind == kind else { return false }
        if kind != .value {
            guard event.childKey?.string == name, SpecExpectedEvent.prevName(of: event) == prevName else { return false }
        }
        return event.node.hash == hash
    }

    /// The test of `eventSetMatch`: the type, the name (not for values), the `prevName` (not for
    /// values or removals), then the hash.
    func looselyMatches(_ event: Event) -> Bool {
        guard event.kind == kind else { return false }
        if kind != .value {
            guard event.childKey?.string == name else { return false }
            if kind != .childRemoved && SpecExpectedEvent.prevName(of: event) != prevName { return false }
        }
        return event.node.hash == hash
    }
}

/// Why a scenario step failed.
struct SpecError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Scenario data as the JavaScript harness reads it.
enum SpecData {
    /// `nodeFromJSON`: the core's decoder, which reads `.value`, `.priority` and arrays the same way.
    static func node(_ json: JSONValue) throws -> Node {
        try Node(json: json)
    }

    /// The members of a merge in JavaScript's property order (integer-like names ascending, then
    /// the others as written), which is the order the SDK applies them in.
    static func mergeChanges(_ json: JSONValue) throws -> [(path: Path, node: Node)] {
        guard case .object(let members) = json else { throw SpecError("merge data must be an object") }
        let indexed = members.compactMap { member in arrayIndex(member.key).map { ($0, member) } }
        let ordered = indexed.sorted { $0.0 < $1.0 }.map(\.1) + members.filter { arrayIndex($0.key) == nil }
        return try ordered.map { (try Path($0.key), try node($0.value)) }
    }

    /// The value of a canonical array index (`0`, `17`, not `01`), as JavaScript orders keys.
    static func arrayIndex(_ key: String) -> UInt32? {
        guard let value = UInt32(key), value < UInt32.max, String(value) == key else { return nil }
        return value
    }
}
