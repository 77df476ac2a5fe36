/// Elements by slot, slots reused: a dense array that a `SessionSlot` indexes directly, with a
/// generation per slot so a slot kept after its element left finds nothing, not the next one.
struct SlotTable<Element> {
    private struct Entry {
        var element: Element?
        /// Bumped when the slot's element leaves.
        var generation: UInt32
    }

    private var entries: [Entry] = []
    private var free: [UInt32] = []

    /// Stores `element` in a free slot.
    mutating func add(_ element: Element) -> SessionSlot {
        if let index = free.popLast() {
            entries[Int(index)].element = element
            return SessionSlot(index: index, generation: entries[Int(index)].generation)
        }
        // A slot per element present at once (open connections of one loop): far below 2^32.
        let index = UInt32(truncatingIfNeeded: entries.count)
        entries.append(Entry(element: element, generation: 0))
        return SessionSlot(index: index, generation: 0)
    }

    /// Empties `slot`, if its element is still there; the slot is reused with a new generation.
    mutating func remove(_ slot: SessionSlot) {
        guard self[slot] != nil else { return }
        let index = Int(slot.index)
        entries[index].element = nil
        // Wrapping: a stale slot would have to outlive 2^32 reuses to match again.
        entries[index].generation &+= 1
        free.append(slot.index)
    }

    /// Every element present, in slot order.
    var elements: [Element] { entries.compactMap(\.element) }

    /// The element in `slot`, if it is still there.
    subscript(slot: SessionSlot) -> Element? {
        let index = Int(slot.index)
        guard index < entries.count, entries[index].generation == slot.generation else { return nil }
        return entries[index].element
    }
}
