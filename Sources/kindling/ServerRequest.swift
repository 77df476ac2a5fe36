import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// One HTTP request from a client command to a Kindling server, through async-http-client
/// rather than Foundation's URLSession: on Linux URLSession links libcurl (which the container
/// image would then have to carry) and cannot trust a private CA, which a server with its own
/// certificate needs (`KINDLING_CA_CERT`).
struct ServerRequest {
    /// The most a response body may hold (an export of a large namespace fits).
    static let maxBody = 1 << 31

    /// What went wrong before a status arrived.
    enum Failure: Error, CustomStringConvertible {
        case unreachable(String)
        case untrustedCA(String)

        var description: String {
            switch self {
            case .unreachable(let reason): reason
            case .untrustedCA(let reason): reason
            }
        }
    }

    var method: HTTPMethod
    var url: URL
    var headers: [(String, String)] = []
    var body: [UInt8]? = nil
    var timeout: Duration = .seconds(300)

    /// The client every request of the process goes through, made at the first: a command that
    /// sends thousands of requests (an import or export of gigabytes, a step or a batch each)
    /// reuses its connection, and holds the same memory at the last request as at the first. A
    /// client made and shut down per request left about 6 KB behind each time (an import of
    /// 12,000 steps ended at 128 MB resident) and a socket in TIME_WAIT. It lives as long as the
    /// process, as async-http-client's own shared client does.
    private static let shared = Result { () throws(Failure) -> HTTPClient in
        HTTPClient(eventLoopGroupProvider: .singleton, configuration: try configuration())
    }

    /// Sends the request and returns the status and body.
    func send() async throws(Failure) -> (status: Int, body: [UInt8]) {
        let client = try Self.shared.get()
        do {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
            let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout / .nanoseconds(1))))
            let bytes = try await response.body.collect(upTo: Self.maxBody)
            return (Int(response.status.code), Array(bytes.readableBytesView))
        } catch {
            throw .unreachable(ConnectionFailure.reason(error))
        }
    }

    /// The text of the PEM file `KINDLING_CA_CERT` names (certificates trusted besides the
    /// system's roots), or nil when it names none.
    static func trustedCertificatesPEM() throws(Failure) -> String? {
        guard let path = ProcessInfo.processInfo.environment["KINDLING_CA_CERT"], !path.isEmpty else { return nil }
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .untrustedCA("KINDLING_CA_CERT: cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// The system's trust roots, plus the certificates in the PEM file `KINDLING_CA_CERT` names.
    static func configuration() throws(Failure) -> HTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let pem = try trustedCertificatesPEM() {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            } catch {
                throw .untrustedCA("KINDLING_CA_CERT: the file holds no readable PEM certificate: \(error)")
            }
            guard !certificates.isEmpty else { throw .untrustedCA("KINDLING_CA_CERT: the file holds no PEM certificate") }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .http1Only
        // One attempt: a command whose server cannot be reached or trusted says so at once,
        // instead of retrying (a refused TLS handshake among the failures) until the timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return configuration
    }
}
