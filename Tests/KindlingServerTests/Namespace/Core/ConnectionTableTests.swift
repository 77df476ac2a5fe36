import KindlingCore
import Testing

@testable import KindlingServer

@Suite("The namespace's table of connections")
struct ConnectionTableTests {
    private func check(_ table: ConnectionTable<Int>, against model: [Int: Int], keys: ClosedRange<Int>) {
        #expect(table.count == model.count)
        for key in keys { #expect(table[ConnectionID(value: key)] == model[key], "key \(key)") }
        var seen: [Int: Int] = [:]
        for (key, value) in table { seen[key.value] = value }
        #expect(seen == model)
    }

    @Test("inserts, replacements and removals agree with a dictionary", arguments: [1, 2, 3, 4])
    func randomOperations(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var table = ConnectionTable<Int>()
        var model: [Int: Int] = [:]
        // Keys from a narrow range, so entries collide, wrap around the table's end, and the
        // table grows and shrinks many times over.
        let keys = -2...300
        for step in 0..<20_000 {
            let key = keys.lowerBound + Int.random(in: 0..<keys.count, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                table[ConnectionID(value: key)] = step
                model[key] = step
            case 5..<9:
                #expect(table.removeValue(forKey: ConnectionID(value: key)) == model.removeValue(forKey: key))
            default:
                // Empty it almost entirely now and then, so it shrinks.
                for key in model.keys.sorted().shuffled(using: &random).prefix(model.count - min(model.count, 3)) {
                    table[ConnectionID(value: key)] = nil
                    model[key] = nil
                }
            }
            if step % 500 == 0 { check(table, against: model, keys: keys) }
        }
        check(table, against: model, keys: keys)
    }

    @Test("server-assigned identities in order, as connections arrive and leave")
    func sequentialIdentities() {
        var table = ConnectionTable<String>()
        for value in 1...10_000 { table[ConnectionID(value: value)] = "c\(value)" }
        #expect(table.count == 10_000)
        for value in stride(from: 1, through: 10_000, by: 2) { table[ConnectionID(value: value)] = nil }
        #expect(table.count == 5_000)
        #expect(table[ConnectionID(value: 9_999)] == nil)
        #expect(table[ConnectionID(value: 10_000)] == "c10000")
        for value in 1...10_000 { table.removeValue(forKey: ConnectionID(value: value)) }
        #expect(table.isEmpty)
        #expect(table[ConnectionID(value: 2)] == nil)
    }

    @Test("iterating a table while it changes walks the entries it had")
    func iterationIsACopy() {
        var table = ConnectionTable<Int>()
        for value in 1...100 { table[ConnectionID(value: value)] = value }
        var visited = 0
        for (key, _) in table {
            table[key] = nil
            visited += 1
        }
        #expect(visited == 100)
        #expect(table.isEmpty)
    }
}
