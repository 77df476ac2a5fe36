import Foundation
import KindlingClient
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// The SDK against a server serving TLS: an `https://` database URL connects over `wss://`,
/// trusting a CA the app names besides the system's roots.
@Suite(.timeLimit(.minutes(2)))
struct ClientTLSTests {
    @Test func anHTTPSDatabaseURLWritesAndReadsOverTLS() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue(serial: 0x2001)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-sdk-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        try leaf.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        try leaf.keyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        var logger = Logger(label: "kindling-client-tls-test")
        logger.logLevel = .critical
        let configuration = ServerConfiguration(port: 0, tls: TLSFiles(certificateChain: certificate, privateKey: key), logger: logger)
        try await KindlingServer.run(configuration) { server in
            let database = try Database(url: "https://127.0.0.1:\(server.port)?ns=sdktls", trustedCertificatesPEM: authority.certificatePEM)
            defer { database.shutdown() }
            #expect(database.namespace == "sdktls")
            let ref = database.reference("rooms/a")
            try await ref.setValue(try JSONParser.parse(#"{"name":"Ada"}"#))
            #expect(try await ref.getData().exportText == #"{"name":"Ada"}"#)
            // The write went to the server, over TLS: a REST read sees it.
            let response = try await TestHTTPConnection.request(
                port: server.port, "GET", "/rooms/a.json?ns=sdktls", tls: try TestTLS.trusting(caPEM: authority.certificatePEM))
            #expect(response.text == #"{"name":"Ada"}"#)
        }
    }

    @Test func trustedCertificatesThatAreNotPEMAreRefused() {
        #expect(throws: DatabaseError.self) {
            _ = try Database(url: "https://127.0.0.1:1?ns=x", trustedCertificatesPEM: "not a certificate")
        }
    }
}
