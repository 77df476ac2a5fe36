import Foundation
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// The client commands against a server with its own certificate: they trust the CA that
/// `KINDLING_CA_CERT` names, and refuse the server without it.
@Suite(.timeLimit(.minutes(2)))
struct CommandLineTLSTests {
    /// Runs `kindling` with `environment` added; returns the exit status and standard output.
    static func run(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, output: String) {
        let executable = try #require(CommandLineTests.executable)
        return try await offPool {
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = Pipe()
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
    }

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
            let set = try await Self.run(["set", "spots/lib", #"{"free":2}"#, "--url", url], environment: trusted)
            #expect(set.status == 0)
            let get = try await Self.run(["get", "spots/lib", "--url", url], environment: trusted)
            #expect(get.status == 0 && get.output == "{\"free\":2}\n")
            // Without the CA the server's certificate is not trusted: unreachable, nothing sent.
            let untrusted = try await Self.run(["get", "spots/lib", "--url", url], environment: ["KINDLING_CA_CERT": ""])
            #expect(untrusted.status == 2)
            let health = try await Self.run(["health", "--url", url], environment: trusted)
            #expect(health.status == 0)
        }
    }
}
