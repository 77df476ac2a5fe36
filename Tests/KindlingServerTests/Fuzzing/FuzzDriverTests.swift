import KindlingTesting
import Testing

/// A short, fixed-seed fuzzing run of each target, as CI's smoke test of the parsers (the long
/// runs use `scripts/fuzz.sh`). Any trap ends the test process; refusals are typed errors the
/// entry points catch.
struct FuzzDriverTests {
    @Test(arguments: FuzzTarget.allCases)
    func aFixedSeedRunSurvives(target: FuzzTarget) {
        var driver = FuzzDriver(target: target, seed: 20_261_123)
        let accepted = driver.run(count: Self.count(target))
        // Mutated inputs both pass and fail the parsers: the run reached the namespace's checks
        // and the refusals alike (a broken harness or verifier would pass nothing).
        #expect(accepted > Self.count(target) / 100, "\(accepted) of \(Self.count(target)) accepted")
        #expect(accepted < Self.count(target), "every input accepted: the mutations do nothing")
    }

    /// Inputs per target, about 1.5 s each in a debug build.
    static func count(_ target: FuzzTarget) -> Int {
        switch target {
        case .json: return 200_000
        case .webSocket: return 70_000
        case .rest: return 25_000
        }
    }

    @Test func theSameSeedReplaysTheSameInputs() {
        var first = FuzzDriver(target: .rest, seed: 7)
        var second = FuzzDriver(target: .rest, seed: 7)
        var other = FuzzDriver(target: .rest, seed: 8)
        let inputs = (0..<50).map { _ in first.next() }
        #expect(inputs == (0..<50).map { _ in second.next() })
        #expect(inputs != (0..<50).map { _ in other.next() })
    }
}
