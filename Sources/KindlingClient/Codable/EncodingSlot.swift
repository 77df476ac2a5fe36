import KindlingCore

/// One place in the value being built. A reference, so a nested container handed out earlier
/// can keep filling its part after the parent container has moved on (as `Codable` allows).
final class EncodingSlot {
    enum Content {
        case empty
        case value(JSONValue)
        case object([(key: String, slot: EncodingSlot)])
        case array([EncodingSlot])
    }

    var content = Content.empty

    /// The member slot for `key`, reusing the slot when the key was encoded before (the later
    /// value wins, as with `JSONEncoder`).
    func member(_ key: String) -> EncodingSlot {
        var members: [(key: String, slot: EncodingSlot)] = []
        if case .object(let existing) = content { members = existing }
        if let found = members.first(where: { $0.key.utf8.elementsEqual(key.utf8) }) { return found.slot }
        let slot = EncodingSlot()
        members.append((key, slot))
        content = .object(members)
        return slot
    }

    func appendElement() -> EncodingSlot {
        var elements: [EncodingSlot] = []
        if case .array(let existing) = content { elements = existing }
        let slot = EncodingSlot()
        elements.append(slot)
        content = .array(elements)
        return slot
    }

    func makeObject() { if case .object = content {} else { content = .object([]) } }
    func makeArray() { if case .array = content {} else { content = .array([]) } }

    /// The finished JSON; nil when nothing was encoded here.
    var json: JSONValue? {
        switch content {
        case .empty: return nil
        case .value(let value): return value
        case .object(let members):
            return .object(members.compactMap { member in member.slot.json.map { JSONMember(member.key, $0) } })
        case .array(let elements): return .array(elements.map { $0.json ?? .null })
        }
    }
}
