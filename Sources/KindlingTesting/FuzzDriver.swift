import KindlingCore

/// A seeded random and mutation fuzzer: each input is a seed of the target, mutated a few times
/// (bytes flipped, inserted, deleted or repeated, splices of another seed, tokens that break
/// parsers inserted), or now and then plain random bytes. The same seed replays the same inputs,
/// so a crash found once is found again.
public struct FuzzDriver: Sendable {
    public let target: FuzzTarget
    private var random: SeededGenerator

    /// Tokens that reach parsers' edge cases: numbers at the edges of integer and double ranges,
    /// escapes, sentinels and structure.
    static let tokens: [String] = [
        "9223372036854775807", "-9223372036854775808", "2147483647", "2147483648", "1e308", "1e309", "-0", "4.9e-324",
        "\\u0000", "\\ud800", "%00", "%0A", "%", "%C3", "\"", "{", "}", "[", "]", ",", ":", "/", ".", "$", "#",
        "&", "=", "?", "+", "\u{0}", "[MIN_NAME]", "[MAX_NAME]", ".priority", ".value", ".sv", "increment",
        "limitToFirst=", "limitToLast=", "orderBy=%22$key%22&", "startAt=", "\"l\":", "\"sp\":", "\"vf\":\"r\"",
        "ns=", "\n", "\n\n", "Content-Length: ", "999999", "true", "null",
    ]

    public init(target: FuzzTarget, seed: UInt64) {
        self.target = target
        self.random = SeededGenerator(seed: seed)
    }

    /// The next input.
    public mutating func next() -> [UInt8] {
        let seeds = target.seeds
        if Int.random(in: 0..<50, using: &random) == 0 {
            return (0..<Int.random(in: 0..<64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
        var bytes = Array(seeds[Int.random(in: 0..<seeds.count, using: &random)].utf8)
        for _ in 0..<Int.random(in: 1...6, using: &random) { mutate(&bytes, seeds: seeds) }
        return bytes
    }

    /// Runs `count` inputs; returns how many got past the parsers (to the namespace, or to a
    /// tree for JSON), so a run that only ever hits refusals shows.
    public mutating func run(count: Int) -> Int {
        var accepted = 0
        for _ in 0..<count where target.run(next()) { accepted += 1 }
        return accepted
    }

    private mutating func mutate(_ bytes: inout [UInt8], seeds: [String]) {
        let position = bytes.isEmpty ? 0 : Int.random(in: 0...bytes.count, using: &random)
        switch Int.random(in: 0..<8, using: &random) {
        case 0 where position < bytes.count:
            bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
        case 1:
            bytes.insert(UInt8.random(in: 0...255, using: &random), at: position)
        case 2 where position < bytes.count:
            let end = min(bytes.count, position + Int.random(in: 1...8, using: &random))
            bytes.removeSubrange(position..<end)
        case 3 where position < bytes.count:
            let end = min(bytes.count, position + Int.random(in: 1...16, using: &random))
            let piece = bytes[position..<end]
            for _ in 0..<Int.random(in: 1...4, using: &random) { bytes.insert(contentsOf: piece, at: position) }
        case 4:
            let other = Array(seeds[Int.random(in: 0..<seeds.count, using: &random)].utf8)
            guard !other.isEmpty else { return }
            let start = Int.random(in: 0..<other.count, using: &random)
            let end = Int.random(in: start...other.count, using: &random)
            bytes.insert(contentsOf: other[start..<end], at: position)
        case 5 where position < bytes.count:
            let digit = UInt8(ascii: "0") + UInt8.random(in: 0...9, using: &random)
            bytes[position] = digit
        default:
            let token = FuzzDriver.tokens[Int.random(in: 0..<FuzzDriver.tokens.count, using: &random)]
            bytes.insert(contentsOf: Array(token.utf8), at: position)
        }
        if bytes.count > 4096 { bytes.removeLast(bytes.count - 4096) }
    }
}
