import KindlingCore
import Testing

@testable import KindlingServer

/// Seeded random mutations of real tokens: `authenticate` must never trap or hang, never make a
/// mutated token the admin, and never accept a signed token as someone other than its subject.
@Suite("CredentialVerifier fuzz")
struct CredentialVerifierFuzzTests {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ {}\":,\u{0}é🔥".utf8)

    static func mutate(_ token: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var bytes = token
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            switch Int.random(in: 0..<7, using: &random) {
            case 0 where !bytes.isEmpty:  // replace one byte
                bytes[Int.random(in: bytes.indices, using: &random)] = alphabet.randomElement(using: &random) ?? 0
            case 1:  // insert one byte
                bytes.insert(alphabet.randomElement(using: &random) ?? 0, at: Int.random(in: 0...bytes.count, using: &random))
            case 2 where !bytes.isEmpty:  // delete a run
                let start = Int.random(in: bytes.indices, using: &random)
                bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...8, using: &random)))
            case 3 where !bytes.isEmpty:  // truncate
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            case 4:  // swap two dot-separated parts
                var parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Array.init)
                if parts.count > 1 {
                    parts.swapAt(Int.random(in: parts.indices, using: &random), Int.random(in: parts.indices, using: &random))
                }
                bytes = Array(parts.joined(separator: [UInt8(ascii: ".")]))
            case 5:  // drop the signature: an unsigned token with the same claims
                if let dot = bytes.lastIndex(of: UInt8(ascii: ".")) { bytes.removeSubrange((dot + 1)...) }
            default:  // flip a bit
                if !bytes.isEmpty { bytes[Int.random(in: bytes.indices, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random) }
            }
        }
        return bytes
    }

    @Test func mutatedTokensNeverTrapNeverAdminNeverSomeoneElse() async throws {
        let production = try CredentialVerifier(settings: CredentialVerifierTests.keyed)
        let emulator = try CredentialVerifier(settings: AuthSettings(emulatorMode: true))
        let now = TestTokens.now
        let seeds: [(token: String, uid: String)] = [
            (try await TestTokens.hs256(.valid(sub: "h")), "h"),
            (try await TestTokens.rs256(.valid(sub: "r")), "r"),
            (try await TestTokens.es256(.valid(sub: "e")), "e"),
            (TestTokens.mockUserToken(sub: "m"), "m"),
            ("owner", ""),
            (TestTokens.adminSecret, ""),
        ]
        for (token, uid) in seeds.prefix(3) {
            guard case .success(.user(let user)) = production.authenticate(token, as: .idToken, now: now) else {
                Issue.record("seed \(uid) refused")
                return
            }
            #expect(user.uid == uid)
        }
        var random = SeededGenerator(seed: 0x4B49_4E44_4C49_4E47)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(3)
        var count = 0
        while count < 30_000, clock.now < deadline {
            count += 1
            let seed = seeds[count % seeds.count]
            let mutated = String(decoding: Self.mutate(Array(seed.token.utf8), using: &random), as: UTF8.self)
            if mutated == seed.token || mutated == TestTokens.adminSecret { continue }
            for kind in [CredentialKind.idToken, .accessToken] {
                switch production.authenticate(mutated, as: kind, now: now) {
                case .success(.admin), .success(.anonymous):
                    Issue.record("production gave \(mutated) more than a refusal")
                case .success(.user(let user)):
                    // Only a signed seed can survive, and then only as itself.
                    #expect(count % seeds.count < 3 && user.uid == seed.uid, "\(mutated)")
                case .failure:
                    break
                }
            }
            if mutated != "owner", case .success(.admin) = emulator.authenticate(mutated, as: .idToken, now: now) {
                Issue.record("emulator made the ID token \(mutated) the admin")
            }
        }
        #expect(count > 100)  // it ran (a loaded machine may reach the time limit early)
    }
}
