import Foundation
import KindlingTesting
import Testing

/// `kindling serve --tls-cert --tls-key` as an operator runs it: refusals at start, the https
/// banner, and one SIGHUP reloading both the rules file and the certificate.
@Suite(.timeLimit(.minutes(2)))
struct ServeTLSCommandTests {
    /// A folder with the files one test hands to `kindling serve`.
    struct Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-serve-tls-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
        func write(_ name: String, _ text: String) throws { try text.write(toFile: path(name), atomically: true, encoding: .utf8) }
        func remove() { try? FileManager.default.removeItem(at: url) }
    }

    @Test func aKeyThatDoesNotMatchRefusesTheStartNamingBothFiles() async throws {
        let executable = try #require(CommandLineTests.executable, "kindling executable not built")
        let folder = try Folder()
        defer { folder.remove() }
        let authority = try TestCertificateAuthority()
        try folder.write("cert.pem", try authority.issue(serial: 0x3001).certificatePEM)
        try folder.write("key.pem", try authority.issue(serial: 0x3002).keyPEM)
        let process = try await ChildProcess.start(
            executable.path,
            arguments: ["serve", "--port", "0", "--in-memory", "--tls-cert", folder.path("cert.pem"), "--tls-key", folder.path("key.pem")])
        let ending = try await process.wait()
        #expect(ending != .exited(0))
        #expect(process.errorOutput.contains("does not match the certificate"))
        #expect(process.errorOutput.contains(folder.path("cert.pem")) && process.errorOutput.contains(folder.path("key.pem")))
    }

    @Test func oneSIGHUPReloadsTheRulesAndTheCertificate() async throws {
        let executable = try #require(CommandLineTests.executable, "kindling executable not built")
        let folder = try Folder()
        defer { folder.remove() }
        let authority = try TestCertificateAuthority()
        let first = try authority.issue(serial: 0x3003)
        try folder.write("cert.pem", first.certificatePEM)
        try folder.write("key.pem", first.keyPEM)
        try folder.write("rules.json", #"{"rules": {".read": true}}"#)
        let process = try await ChildProcess.start(
            executable.path,
            arguments: [
                "serve", "--port", "0", "--in-memory", "--log-level", "notice", "--rules", folder.path("rules.json"),
                "--tls-cert", folder.path("cert.pem"), "--tls-key", folder.path("key.pem"),
            ])
        #expect(try await process.waitFor { $0.contains("Data:") })
        let line = try #require(process.output.split(separator: "\n").first { $0.contains("realtime:") })
        #expect(line.contains("wss://127.0.0.1:"))
        #expect(process.output.contains("rest:     https://127.0.0.1:"))
        let address = try #require(line.range(of: "wss://127.0.0.1:"))
        let port = try #require(Int(line[address.upperBound...].prefix { $0.isNumber }))
        let trust = try TestTLS.trusting(caPEM: authority.certificatePEM)
        let before = try await TestHTTPConnection.connect(port: port, tls: trust)
        defer { before.close() }
        #expect(try await before.request("GET", "/.json").status == 200)
        #expect(try await before.peerCertificateSerial() == first.serial)

        let second = try authority.issue(serial: 0x3004)
        try folder.write("cert.pem", second.certificatePEM)
        try folder.write("key.pem", second.keyPEM)
        // New rules too, so the reload is seen in what they decide, not only in the log.
        try folder.write("rules.json", #"{"rules": {".read": false}}"#)
        process.signal(SIGHUP)
        #expect(try await process.waitFor(inErrors: true) { $0.contains("TLS certificate reloaded: new connections get serial \(second.serial)") })
        #expect(try await process.waitFor(inErrors: true) { $0.contains("rules reloaded") })
        let after = try await TestHTTPConnection.connect(port: port, tls: trust)
        defer { after.close() }
        #expect(try await after.request("GET", "/.json").status == 401)
        #expect(try await after.peerCertificateSerial() == second.serial)
        #expect(process.isRunning)
    }
}
