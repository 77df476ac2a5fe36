import Foundation
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// The client commands against a server with its own certificate: they trust the CA that
/// `KINDLING_CA_CERT` names, and refuse the server without it.
@Suite(.timeLimit(.minutes(2)))
struct CommandLineTLSTests {
    @Test func setAndGetOverHTTPSTrustTheCAItIsGiven() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue(serial: 0x3001)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-cli-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let ca = directory.appendingPathComponent("ca.pem").path
        try leaf.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        try leaf.keyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        try authority.certificatePEM.write(toFile: ca, atomically: true, encoding: .utf8)
        var logger = Logger(label: "kindling-cli-tls-test")
        logger.logLevel = .critical
        let configuration = ServerConfiguration(port: 0, tls: TLSFiles(certificateChain: certificate, privateKey: key), logger: logger)
        try await KindlingServer.run(configuration) { server in
            let url = "https://127.0.0.1:\(server.port)?ns=clitls"
            let trusted = ["KINDLING_CA_CERT": ca]
            let set = try await CommandLineTests.run(["set", "spots/lib", #"{"free":2}"#, "--url", url], environment: trusted)
            #expect(set.status == 0)
            let get = try await CommandLineTests.run(["get", "spots/lib", "--url", url], environment: trusted)
            #expect(get.status == 0 && get.output == "{\"free\":2}\n")
            // Without the CA the server's certificate is not trusted: unreachable, nothing sent.
            let untrusted = try await CommandLineTests.run(["get", "spots/lib", "--url", url], environment: ["KINDLING_CA_CERT": ""])
            #expect(untrusted.status == 2)
            let health = try await CommandLineTests.run(["health", "--url", url], environment: trusted)
            #expect(health.status == 0)
        }
    }
}
