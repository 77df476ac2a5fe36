import Foundation
import JWTKit
import KindlingCore

/// A Google service account's key file (the JSON the Firebase console's "Generate new private
/// key" downloads), read for `kindling migrate --from-credential`: who the account is, its RSA
/// private key and where it trades a signed assertion for an OAuth access token (RFC 7523's
/// JWT bearer grant, as the Google auth libraries do).
struct ServiceAccountKey: Sendable {
    /// Where Google's token endpoint is when a key file names none.
    static let googleTokenURI = "https://oauth2.googleapis.com/token"
    /// What the access token may do: read and write Realtime Database data, and say which
    /// account it is (the database's REST API asks for both scopes).
    static let databaseScopes = "https://www.googleapis.com/auth/firebase.database https://www.googleapis.com/auth/userinfo.email"
    /// How long an assertion is valid: an hour, the most Google accepts.
    static let assertionLifetime: Int64 = 3600

    /// Why a key file cannot be used.
    enum Failure: Error, Equatable, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case notJSON(path: String)
        case notServiceAccount(path: String, type: String?)
        case missing(path: String, field: String)
        case invalidPrivateKey(path: String, reason: String)
        case invalidTokenURI(path: String, uri: String)

        var description: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
            case .notJSON(let path): "\(path) is not JSON: expected a service account key file"
            case .notServiceAccount(let path, let type):
                "\(path) is not a service account key (its type is \(type.map { "\"\($0)\"" } ?? "missing"), not \"service_account\")"
            case .missing(let path, let field): "\(path) has no \"\(field)\": expected a service account key file"
            case .invalidPrivateKey(let path, let reason): "the private_key of \(path) is not a PEM RSA private key: \(reason)"
            case .invalidTokenURI(let path, let uri): "the token_uri of \(path) is not an http or https URL: \(uri)"
            }
        }
    }

    /// The account's email: the assertion's issuer.
    let clientEmail: String
    /// The key's id, named in the assertion's header so Google picks the right public key.
    let keyID: String?
    let tokenURI: URL
    private let privateKey: Insecure.RSA.PrivateKey

    /// Reads the key file at `path`.
    init(path: String) throws(Failure) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        try self.init(json: [UInt8](data), path: path)
    }

    /// Reads a key file's text; `path` names it in errors.
    init(json: [UInt8], path: String) throws(Failure) {
        guard let document = try? JSONParser.parse(json), case .object = document else { throw .notJSON(path: path) }
        let type = document["type"]?.stringValue
        guard type == "service_account" else { throw .notServiceAccount(path: path, type: type) }
        func field(_ name: String) throws(Failure) -> String {
            guard let value = document[name]?.stringValue, !value.isEmpty else { throw .missing(path: path, field: name) }
            return value
        }
        clientEmail = try field("client_email")
        let pem = try field("private_key")
        do {
            privateKey = try Insecure.RSA.PrivateKey(pem: pem)
        } catch {
            throw .invalidPrivateKey(path: path, reason: "\(error)")
        }
        keyID = document["private_key_id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        let uri = document["token_uri"]?.stringValue ?? Self.googleTokenURI
        guard let url = URL(string: uri), url.scheme == "https" || url.scheme == "http", url.host?.isEmpty == false else {
            throw .invalidTokenURI(path: path, uri: uri)
        }
        tokenURI = url
    }

    /// The claims of the assertion (RFC 7523 section 3, with Google's `scope`).
    struct Assertion: JWTPayload, Equatable {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int64
        var exp: Int64

        /// The token endpoint checks the assertion; this side only makes it.
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The assertion's claims at `now` (seconds since the epoch).
    func assertion(now: Int64) -> Assertion {
        Assertion(iss: clientEmail, scope: Self.databaseScopes, aud: tokenURI.absoluteString, iat: now, exp: now + Self.assertionLifetime)
    }

    /// The assertion at `now`, signed RS256 with the account's key.
    func signedAssertion(now: Int64) async throws -> String {
        let keys = JWTKeyCollection()
        let kid = keyID.map { JWKIdentifier(string: $0) }
        await keys.add(rsa: privateKey, digestAlgorithm: .sha256, kid: kid)
        return try await keys.sign(assertion(now: now), kid: kid)
    }
}
