import Testing

@testable import KindlingServer

/// A fan-out names its recipients by slot; a slot kept after its connection left must reach
/// nobody, even once the slot holds another connection.
struct SlotTableTests {
    @Test func aSlotFindsItsElementUntilItLeaves() {
        var table = SlotTable<String>()
        let a = table.add("a")
        let b = table.add("b")
        #expect(table[a] == "a")
        #expect(table[b] == "b")
        table.remove(a)
        #expect(table[a] == nil)
        #expect(table[b] == "b")
    }

    @Test func aReusedSlotDoesNotReachTheElementThatLeft() {
        var table = SlotTable<String>()
        let old = table.add("old")
        table.remove(old)
        let new = table.add("new")
        #expect(new.index == old.index)
        #expect(table[old] == nil)
        #expect(table[new] == "new")
        // Removing through the stale slot leaves the new element in place.
        table.remove(old)
        #expect(table[new] == "new")
    }

    @Test func aSlotFromElsewhereFindsNothing() {
        var table = SlotTable<String>()
        _ = table.add("a")
        #expect(table[SessionSlot(index: 7, generation: 0)] == nil)
    }
}
