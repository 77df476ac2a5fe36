/// Push ids: 20 characters that sort in creation order, like the ones every Firebase SDK makes.
///
/// Eight characters of milliseconds since the epoch, then twelve random ones, all from a
/// 64-character alphabet in ASCII order. Within one millisecond the random part is incremented
/// instead of redrawn, so ids from one generator strictly increase.
public struct PushIDGenerator: Sendable {
    static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    private var lastTimestamp: Int64 = -1
    private var lastRandom: [Int] = Array(repeating: 0, count: 12)

    public init() {}

    /// The next id for a write committed at `timestamp` (ms since the epoch). A clock that steps
    /// back is treated as standing still, so ids keep increasing.
    public mutating func next(timestamp: Int64, using random: inout some RandomNumberGenerator) -> Key {
        let now = max(timestamp, lastTimestamp)
        if now == lastTimestamp {
            var index = 11
            while index >= 0, lastRandom[index] == 63 {
                lastRandom[index] = 0
                index -= 1
            }
            if index >= 0 {
                lastRandom[index] += 1
            } else {
                // All 2^72 values of this millisecond are used: borrow the next one.
                return next(timestamp: now + 1, using: &random)
            }
        } else {
            lastRandom = (0..<12).map { _ in Int.random(in: 0..<64, using: &random) }
        }
        lastTimestamp = now
        var characters = [UInt8](repeating: 0, count: 20)
        var time = now
        for index in stride(from: 7, through: 0, by: -1) {
            characters[index] = PushIDGenerator.alphabet[Int(time % 64)]
            time /= 64
        }
        for index in 0..<12 { characters[8 + index] = PushIDGenerator.alphabet[lastRandom[index]] }
        return Key(unchecked: String(decoding: characters, as: UTF8.self))
    }

    /// The creation time encoded in a push id's first eight characters, if it is one.
    public static func timestamp(of id: String) -> Int64? {
        let bytes = Array(id.utf8)
        guard bytes.count == 20 else { return nil }
        var time: Int64 = 0
        for byte in bytes.prefix(8) {
            guard let digit = alphabet.firstIndex(of: byte) else { return nil }
            time = time * 64 + Int64(digit)
        }
        return time
    }
}
