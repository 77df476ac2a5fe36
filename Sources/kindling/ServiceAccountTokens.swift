import Foundation
import KindlingCore
import NIOHTTP1

/// The OAuth access tokens `kindling migrate --from-credential` reads its source with: one
/// taken from the key's token endpoint when first asked for, and a new one once the current
/// one nears its end, so a copy that outlasts one token (Google's last an hour) goes on with
/// the next instead of failing half way.
actor ServiceAccountTokens {
    /// Why no token was had.
    enum Failure: Error, CustomStringConvertible {
        case unreachable(uri: String, reason: String)
        case refused(uri: String, status: Int, message: String)
        case malformed(uri: String, reason: String)
        case unsigned(reason: String)

        var description: String {
            switch self {
            case .unreachable(let uri, let reason): "cannot reach the token endpoint \(uri): \(reason)"
            case .refused(let uri, let status, let message): "the token endpoint \(uri) answered \(status): \(message)"
            case .malformed(let uri, let reason): "the token endpoint \(uri) answered without a usable token: \(reason)"
            case .unsigned(let reason): "cannot sign the assertion with the service account's key: \(reason)"
            }
        }
    }

    /// A token and when to take the next one.
    private struct Token {
        var value: String
        var renewAt: ContinuousClock.Instant
    }

    let key: ServiceAccountKey
    private var current: Token?
    /// The renewal under way, which every caller meanwhile waits for rather than start its own.
    private var renewal: Task<Token, any Error>?

    init(key: ServiceAccountKey) {
        self.key = key
    }

    /// A token that is not near its end.
    func accessToken() async throws(Failure) -> String {
        if let current, ContinuousClock.now < current.renewAt { return current.value }
        return try await renew()
    }

    /// A new token, whatever the age of the current one: for when the source revoked it.
    func renew() async throws(Failure) -> String {
        if let renewal { return try await Self.value(of: renewal).value }
        let key = key
        let task = Task { try await Self.take(with: key) }
        renewal = task
        defer { renewal = nil }
        let token = try await Self.value(of: task)
        current = token
        return token.value
    }

    private static func value(of task: Task<Token, any Error>) async throws(Failure) -> Token {
        do {
            return try await task.value
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .unsigned(reason: "\(error)")
        }
    }

    /// How long after it is taken a token that lasts `lifetime` is renewed: a quarter of its
    /// life early, at most five minutes, so a request never carries one about to lapse.
    static func renewal(after lifetime: Duration) -> Duration {
        lifetime - min(.seconds(300), lifetime / 4)
    }

    /// Trades a freshly signed assertion for a token (RFC 7523 JWT bearer grant).
    private static func take(with key: ServiceAccountKey) async throws(Failure) -> Token {
        let assertion: String
        do {
            assertion = try await key.signedAssertion(now: Int64(Date().timeIntervalSince1970))
        } catch {
            throw .unsigned(reason: "\(error)")
        }
        let uri = key.tokenURI.absoluteString
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        let request = ServerRequest(
            method: .POST, url: key.tokenURI, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
            body: Array(form.utf8), timeout: .seconds(60))
        let started = ContinuousClock.now
        let (status, body): (Int, [UInt8])
        do {
            (status, body) = try await request.send()
        } catch {
            throw .unreachable(uri: uri, reason: error.description)
        }
        let answer = try? JSONParser.parse(body)
        guard status == 200 else {
            // OAuth's error form: {"error": "invalid_grant", "error_description": "…"}.
            let message = [answer?["error"]?.stringValue, answer?["error_description"]?.stringValue].compactMap { $0 }.joined(separator: ": ")
            throw .refused(uri: uri, status: status, message: message.isEmpty ? String(decoding: body.prefix(500), as: UTF8.self) : message)
        }
        guard let value = answer?["access_token"]?.stringValue, !value.isEmpty else {
            throw .malformed(uri: uri, reason: "no access_token in \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
        // RFC 6749 makes expires_in optional; Google always sends it, and its tokens last an hour.
        let seconds = answer?["expires_in"]?.numberValue ?? 3600
        guard seconds.isFinite, seconds >= 1, seconds <= 86_400 * 366 else {
            throw .malformed(uri: uri, reason: "expires_in \(seconds) is not a number of seconds from 1 to a year")
        }
        // Counted from when it was asked for, so the time on the wire does not make it late.
        return Token(value: value, renewAt: started + renewal(after: .milliseconds(Int64(seconds * 1000))))
    }
}
