import CryptoExtras
import Foundation
import KindlingCore
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

@testable import KindlingServer

/// An OAuth token endpoint standing in for Google's (`oauth2.googleapis.com/token`) in the
/// migration tests: it takes the JWT bearer grant (RFC 7523), checks the assertion's RS256
/// signature with the service account's public key and its claims as Google does, and answers
/// with an access token `issue` makes (here a token the source Kindling verifies) and
/// `expires_in`. Written for the tests: no kept library serves OAuth's token side in Swift.
final class FakeTokenEndpoint: Sendable {
    let port: Int
    private let channel: any Channel
    private let state: Mutex<State>

    private struct State {
        var issued = 0
        var refusals: [String] = []
        var refusing = false
    }

    /// What the endpoint checks and answers.
    struct Account: Sendable {
        var email: String
        var publicKey: _RSA.Signing.PublicKey
        var lifetimeSeconds: Int
        /// The access token for one grant.
        var issue: @Sendable () -> String
    }

    var url: String { "http://127.0.0.1:\(port)/token" }
    /// How many tokens it gave.
    var issued: Int { state.withLock { $0.issued } }
    /// Why it refused the grants it refused.
    var refusals: [String] { state.withLock { $0.refusals } }

    /// From now on every grant is refused, as Google refuses a deleted key's.
    func refuseFromNowOn() { state.withLock { $0.refusing = true } }

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
        self.state = Mutex(State())
    }

    static func start(_ account: Account) async throws -> FakeTokenEndpoint {
        let holder = Mutex<FakeTokenEndpoint?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(
                        Handler { request in
                            guard let endpoint = holder.withLock({ $0 }) else { return (503, "{}") }
                            return endpoint.answer(request, account)
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let endpoint = FakeTokenEndpoint(channel: channel, port: channel.localAddress?.port ?? 0)
        holder.withLock { $0 = endpoint }
        return endpoint
    }

    func stop() async {
        try? await channel.close()
    }

    /// The status and JSON body for one request.
    private func answer(_ request: (head: HTTPRequestHead, body: [UInt8]), _ account: Account) -> (Int, String) {
        switch check(request, account) {
        case .success:
            state.withLock { $0.issued += 1 }
            return (200, #"{"access_token":"\#(account.issue())","expires_in":\#(account.lifetimeSeconds),"token_type":"Bearer"}"#)
        case .failure(let refusal):
            state.withLock { $0.refusals.append(refusal.reason) }
            return (400, #"{"error":"invalid_grant","error_description":"\#(refusal.reason)"}"#)
        }
    }

    private struct Refusal: Error {
        var reason: String
    }

    private func check(_ request: (head: HTTPRequestHead, body: [UInt8]), _ account: Account) -> Result<Void, Refusal> {
        guard request.head.method == .POST, request.head.uri == "/token" else { return .failure(Refusal(reason: "not POST /token")) }
        guard request.head.headers["content-type"].first == "application/x-www-form-urlencoded" else {
            return .failure(Refusal(reason: "not a form"))
        }
        var form: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else { return .failure(Refusal(reason: "grant_type")) }
        // Read with the server's own compact-token reader; the signature checked with swift-crypto.
        guard case .success(let assertion) = CompactJWT.parse(form["assertion"] ?? "") else { return .failure(Refusal(reason: "not a JWT")) }
        let claims = assertion.claims
        guard assertion.algorithm == "RS256" else { return .failure(Refusal(reason: "alg")) }
        guard
            account.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: assertion.signature), for: assertion.signingInput, padding: .insecurePKCS1v1_5)
        else { return .failure(Refusal(reason: "Invalid JWT Signature.")) }
        let now = Date().timeIntervalSince1970
        guard claims["iss"]?.stringValue == account.email else { return .failure(Refusal(reason: "iss")) }
        guard claims["aud"]?.stringValue == url else { return .failure(Refusal(reason: "aud")) }
        guard claims["scope"]?.stringValue?.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.database") == true else {
            return .failure(Refusal(reason: "scope"))
        }
        guard let iat = claims["iat"]?.numberValue, let exp = claims["exp"]?.numberValue, abs(iat - now) < 300, exp > now, exp - iat <= 3600
        else { return .failure(Refusal(reason: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")) }
        if state.withLock({ $0.refusing }) { return .failure(Refusal(reason: "Invalid JWT Signature.")) }
        return .success(())
    }

    /// Gathers one request and answers it with what `respond` says.
    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let respond: (_ request: (head: HTTPRequestHead, body: [UInt8])) -> (Int, String)
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(respond: @escaping (_ request: (head: HTTPRequestHead, body: [UInt8])) -> (Int, String)) {
            self.respond = respond
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = []
            case .body(var buffer):
                body += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                guard let head else { return }
                let (status, text) = respond((head, body))
                var headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", "\(text.utf8.count)")])
                if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
                let response = HTTPResponseHead(version: head.version, status: .init(statusCode: status), headers: headers)
                context.write(wrapOutboundOut(.head(response)), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                let keepAlive = head.isKeepAlive
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                    if !keepAlive { channel.close(promise: nil) }
                }
                self.head = nil
            }
        }
    }
}
