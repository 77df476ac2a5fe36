import Crypto
import CryptoExtras
import Foundation
import KindlingCore
import Testing

@testable import kindling

/// `kindling migrate --from-credential`'s key file and the assertion it signs, checked with
/// swift-crypto directly rather than with jwt-kit, which made it.
struct ServiceAccountKeyTests {
    static let key: _RSA.Signing.PrivateKey = {
        guard let key = try? _RSA.Signing.PrivateKey(keySize: .bits2048) else { preconditionFailure("RSA key generation failed") }
        return key
    }()

    /// A key file as the Firebase console downloads it, with `changes` made to its members.
    static func file(_ changes: [String: JSONValue?] = [:]) -> [UInt8] {
        var members: [String: JSONValue] = [
            "type": "service_account", "project_id": "my-app", "private_key_id": "0123abcd",
            "private_key": .string(key.pkcs8PEMRepresentation), "client_email": "migrator@my-app.iam.gserviceaccount.com",
            "client_id": "1234", "token_uri": "https://oauth2.googleapis.com/token",
        ]
        for (name, value) in changes { members[name] = value }
        return Array(JSONWriter.string(.object(members.sorted { $0.key < $1.key }.map { JSONMember($0.key, $0.value) })).utf8)
    }

    @Test func aConsoleKeyFileIsRead() throws {
        let account = try ServiceAccountKey(json: Self.file(), path: "key.json")
        #expect(account.clientEmail == "migrator@my-app.iam.gserviceaccount.com")
        #expect(account.keyID == "0123abcd")
        #expect(account.tokenURI.absoluteString == "https://oauth2.googleapis.com/token")
        // A file without token_uri gets Google's; a PKCS#1 key is read as well as PKCS#8.
        let older = try ServiceAccountKey(json: Self.file(["token_uri": nil, "private_key": .string(Self.key.pemRepresentation)]), path: "k")
        #expect(older.tokenURI.absoluteString == ServiceAccountKey.googleTokenURI)
    }

    @Test func aFileThatIsNotAServiceAccountKeySaysWhy() {
        #expect(throws: ServiceAccountKey.Failure.notJSON(path: "k")) { try ServiceAccountKey(json: Array("{oops".utf8), path: "k") }
        #expect(throws: ServiceAccountKey.Failure.notServiceAccount(path: "k", type: "authorized_user")) {
            try ServiceAccountKey(json: Self.file(["type": "authorized_user"]), path: "k")
        }
        #expect(throws: ServiceAccountKey.Failure.missing(path: "k", field: "client_email")) {
            try ServiceAccountKey(json: Self.file(["client_email": nil]), path: "k")
        }
        #expect(throws: ServiceAccountKey.Failure.invalidTokenURI(path: "k", uri: "ftp://x/token")) {
            try ServiceAccountKey(json: Self.file(["token_uri": "ftp://x/token"]), path: "k")
        }
        do {
            _ = try ServiceAccountKey(json: Self.file(["private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"]), path: "k")
            Issue.record("a broken private key was accepted")
        } catch {
            guard case .invalidPrivateKey(path: "k", _) = error else { Issue.record("\(error)"); return }
        }
        #expect(throws: ServiceAccountKey.Failure.self) { try ServiceAccountKey(path: "/nonexistent/key.json") }
    }

    @Test func theAssertionIsSignedWithTheAccountsKeyForTheTokenEndpoint() async throws {
        let account = try ServiceAccountKey(json: Self.file(["token_uri": "http://127.0.0.1:4000/token"]), path: "k")
        let token = try await account.signedAssertion(now: 1_800_000_000)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        let header = try JSONParser.parse([UInt8](try #require(Self.base64URL(parts[0]))))
        #expect(header["alg"]?.stringValue == "RS256")
        #expect(header["kid"]?.stringValue == "0123abcd")
        let claims = try JSONParser.parse([UInt8](try #require(Self.base64URL(parts[1]))))
        #expect(claims["iss"]?.stringValue == "migrator@my-app.iam.gserviceaccount.com")
        #expect(claims["aud"]?.stringValue == "http://127.0.0.1:4000/token")
        #expect(claims["scope"]?.stringValue?.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.database") == true)
        #expect(claims["iat"]?.numberValue == 1_800_000_000)
        #expect(claims["exp"]?.numberValue == 1_800_003_600)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Self.base64URL(parts[2])))
        #expect(Self.key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8), padding: .insecurePKCS1v1_5))
        let other = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        #expect(!other.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8), padding: .insecurePKCS1v1_5))
    }

    @Test func aTokenIsRenewedAQuarterOfItsLifeEarlyAndAtMostFiveMinutes() {
        #expect(ServiceAccountTokens.renewal(after: .seconds(3600)) == .seconds(3300))
        #expect(ServiceAccountTokens.renewal(after: .seconds(600)) == .seconds(450))
        #expect(ServiceAccountTokens.renewal(after: .seconds(8)) == .seconds(6))
    }

    static func base64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
