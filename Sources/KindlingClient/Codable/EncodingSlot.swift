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
    /// The member slots by name (UTF-8 bytes), so encoding n members is O(n), not O(n²).
    private var memberIndex: [[UInt8]: EncodingSlot] = [:]

    /// The member slot for `key`, reusing the slot when the key was encoded before (the later
    /// value wins, as with `JSONEncoder`).
    func member(_ key: String) -> EncodingSlot {
        let name = Array(key.utf8)
        guard case .object(var members) = content else {
            let slot = EncodingSlot()
            content = .object([(key, slot)])
            memberIndex = [name: slot]
            return slot
        }
        if let found = memberIndex[name] { return found }
        // Released while appending, so the array is extended in place rather than copied.
        content = .empty
        let slot = EncodingSlot()
        members.append((key, slot))
        content = .object(members)
        memberIndex[name] = slot
        return slot
    }

    func appendElement() -> EncodingSlot {
        var elements: [EncodingSlot] = []
        if case .array(let existing) = content { elements = existing }
        content = .empty
        let slot = EncodingSlot()
        elements.append(slot)
        content = .array(elements)
        return slot
    }

    func makeObject() {
        guard case .object = content else {
            content = .object([])
            memberIndex = [:]
            return
        }
    }
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
