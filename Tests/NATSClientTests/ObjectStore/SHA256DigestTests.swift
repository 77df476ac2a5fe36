import Testing

@testable import NATSClient

@Suite struct SHA256DigestTests {
    private func hex(_ bytes: some Collection<UInt8>) -> String {
        var digest = SHA256Digest()
        digest.update(bytes)
        return digest.finalize().map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test func matchesTheStandardVectors() {
        #expect(hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func incrementalUpdatesMatchOneShot() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var pieces = SHA256Digest()
        pieces.update(bytes[0..<63])
        pieces.update(bytes[63..<64])
        pieces.update(bytes[64...])
        var whole = SHA256Digest()
        whole.update(bytes)
        #expect(pieces.finalize() == whole.finalize())
    }
}
