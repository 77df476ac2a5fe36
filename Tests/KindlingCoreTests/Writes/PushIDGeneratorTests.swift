import Testing

@testable import KindlingCore

struct PushIDGeneratorTests {
    @Test func idsEncodeTheTimeAndUseTheAlphabet() {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 1)
        let id = generator.next(timestamp: 1_795_263_912_764, using: &random).string
        #expect(id.utf8.count == 20)
        #expect(PushIDGenerator.timestamp(of: id) == 1_795_263_912_764)
        #expect(id.hasPrefix("-P"))
        #expect(id.utf8.allSatisfy { PushIDGenerator.alphabet.contains($0) })
    }

    @Test func strictlyIncreasingWithinOneMillisecondAndAcrossClockSteps() {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 2)
        var previous = ""
        for step in 0..<5000 {
            // Many ids per millisecond, and a clock that steps back now and then.
            let time: Int64 = 1_700_000_000_000 + Int64(step / 100) - (step % 777 == 0 ? 5 : 0)
            let id = generator.next(timestamp: time, using: &random).string
            #expect(previous < id, "\(previous) then \(id)")
            #expect(Key.compare(Key(stringLiteral: previous.isEmpty ? "-" : previous), Key(stringLiteral: id)) < 0)
            previous = id
        }
    }

    @Test func carryRollsOverRandomDigits() {
        var generator = PushIDGenerator()
        var ones = AllOnes()
        let first = generator.next(timestamp: 5, using: &ones).string
        #expect(first.hasSuffix("zzzzzzzzzzzz"))
        let second = generator.next(timestamp: 5, using: &ones).string
        #expect(first < second)
    }
}

/// Draws the largest digit every time, to exercise the carry.
struct AllOnes: RandomNumberGenerator {
    mutating func next() -> UInt64 { .max }
}
