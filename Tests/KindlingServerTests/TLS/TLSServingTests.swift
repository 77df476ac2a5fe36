import Foundation
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import NIOSSL
import Testing

/// `https://` and `wss://` on the server's one port, with a CA and server certificates made in the
/// test: the realtime and REST paths over TLS, the key forms accepted, reload, and refusals.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct TLSServingTests {
    /// A folder of its own for one test's certificate and key files.
    struct Files {
        let directory: URL
        var certificate: String { directory.appendingPathComponent("cert.pem").path }
        var key: String { directory.appendingPathComponent("key.pem").path }
        var tls: TLSFiles { TLSFiles(certificateChain: certificate, privateKey: key) }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        func write(certificate text: String, key keyText: String) throws {
            try text.write(toFile: certificate, atomically: true, encoding: .utf8)
            try keyText.write(toFile: key, atomically: true, encoding: .utf8)
        }

        func write(_ leaf: TestCertificateAuthority.Leaf) throws { try write(certificate: leaf.certificatePEM, key: leaf.keyPEM) }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "kindling-tls-test")
        logger.logLevel = .critical
        return logger
    }

    static func withTLSServer(
        _ leaf: TestCertificateAuthority.Leaf, _ body: (KindlingServer, Files) async throws -> Void
    ) async throws {
        let files = try Files()
        defer { files.remove() }
        try files.write(leaf)
        try await KindlingServer.run(ServerConfiguration(port: 0, tls: files.tls, logger: quietLogger)) { server in
            try await body(server, files)
        }
    }

    @Test func theTestClientSpeaksWSSHandshakeSetAndListen() async throws {
        let authority = try TestCertificateAuthority()
        try await Self.withTLSServer(try authority.issue(serial: 1001)) { server, _ in
            let trust = try TestTLS.trusting(caPEM: authority.certificatePEM)
            let writer = try await TestClient.connect(port: server.port, tls: trust)
            let listener = try await TestClient.connect(port: server.port, tls: trust)
            #expect(writer.handshake["d"]?["t"]?.stringValue == "h")
            #expect(writer.handshake["d"]?["d"]?["h"] == .string("127.0.0.1:\(server.port)"))
            let listened = try await listener.request("q", try JSONParser.parse(#"{"p":"/rooms","h":""}"#))
            #expect(listened.last?["d"]?["b"]?["s"]?.stringValue == "ok")
            let written = try await writer.request("p", try JSONParser.parse(#"{"p":"/rooms/a","d":{"n":1}}"#))
            #expect(written.last?["d"]?["b"]?["s"]?.stringValue == "ok")
            let pushed = try await listener.nextMessage()
            #expect(pushed["d"]?["a"]?.stringValue == "d")
            #expect(pushed["d"]?["b"]?["p"]?.stringValue == "rooms/a")
            #expect(pushed["d"]?["b"]?["d"] == (try JSONParser.parse(#"{"n":1}"#)))
            await writer.close()
            await listener.close()
        }
    }

    @Test func restGetAndPutOverHTTPS() async throws {
        let authority = try TestCertificateAuthority()
        try await Self.withTLSServer(try authority.issue(serial: 1002)) { server, _ in
            let trust = try TestTLS.trusting(caPEM: authority.certificatePEM)
            let connection = try await TestHTTPConnection.connect(port: server.port, tls: trust)
            defer { connection.close() }
            let put = try await connection.request("PUT", "/items/a.json?ns=tls", body: #"{"name":"lamp"}"#)
            #expect(put.status == 200)
            let get = try await connection.request("GET", "/items.json?ns=tls")
            #expect(get.status == 200)
            #expect(try get.json() == (try JSONParser.parse(#"{"a":{"name":"lamp"}}"#)))
            #expect(try await connection.peerCertificateSerial() == "03ea")
        }
    }

    @Test func aWSSReaderThatFallsBehindIsDisconnected() async throws {
        // The outbound limit counts what waits below the TLS handler too: a stalled wss reader is
        // cut off as a plain one is.
        let authority = try TestCertificateAuthority()
        let files = try Files()
        defer { files.remove() }
        try files.write(try authority.issue(serial: 1015))
        let configuration = ServerConfiguration(port: 0, maxPendingOutboundBytes: 4096, tls: files.tls, logger: Self.quietLogger)
        try await KindlingServer.run(configuration) { server in
            let trust = try TestTLS.trusting(caPEM: authority.certificatePEM)
            let writer = try await TestClient.connect(port: server.port, tls: trust)
            let slow = try await TestClient.connect(port: server.port, receiveBufferBytes: 16 * 1024, tls: trust)
            _ = try await slow.request("q", try JSONParser.parse(#"{"p":"/flood","h":""}"#))
            slow.pauseReading()
            for round in 0..<40 {
                let text = String(repeating: "x", count: 200_000) + String(round)
                _ = try await writer.request("p", .object([JSONMember("p", .string("/flood")), JSONMember("d", .string(text))]))
            }
            slow.resumeReading()
            #expect(await slow.waitForClose())
            await writer.close()
        }
    }

    @Test func anEventStreamOverHTTPSGetsItsEvents() async throws {
        let authority = try TestCertificateAuthority()
        try await Self.withTLSServer(try authority.issue(serial: 1010)) { server, _ in
            let trust = try TestTLS.trusting(caPEM: authority.certificatePEM)
            let stream = try await TestHTTPConnection.connect(port: server.port, tls: trust)
            defer { stream.close() }
            try await stream.send("GET", "/feed.json?ns=sse", headers: [("Accept", "text/event-stream")])
            #expect(try await stream.responseHead().status == 200)
            #expect(try await stream.nextEvent().data == #"{"path":"/","data":null}"#)
            #expect(try await TestHTTPConnection.request(port: server.port, "PUT", "/feed/a.json?ns=sse", body: "7", tls: trust).status == 200)
            var event = try await stream.nextEvent()
            while event.event == "keep-alive" { event = try await stream.nextEvent() }
            #expect(event.event == "put")
            #expect(event.data == #"{"path":"/a","data":7}"#)
        }
    }

    @Test func aClientThatStartsAHandshakeAndFallsSilentIsClosedAtTheHeaderTimeout() async throws {
        let authority = try TestCertificateAuthority()
        let files = try Files()
        defer { files.remove() }
        try files.write(try authority.issue(serial: 1011))
        var configuration = ServerConfiguration(port: 0, tls: files.tls, logger: Self.quietLogger)
        configuration.headerTimeout = .seconds(1)
        try await KindlingServer.run(configuration) { server in
            let raw = try await RawConnection.connect(port: server.port)
            // On a loaded machine the timeout may pass before these bytes go out; closed either way.
            try? await raw.send([0x16, 0x03, 0x01])
            #expect(await raw.waitForClose(timeout: .seconds(10)))
        }
    }

    @Test(arguments: TestCertificateAuthority.KeyForm.allCases)
    func everyKeyFormServes(_ form: TestCertificateAuthority.KeyForm) async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue(serial: 1003, keyForm: form)
        let marker =
            switch form {
            case .ecPKCS8, .rsaPKCS8: "-----BEGIN PRIVATE KEY-----"
            case .ecSEC1: "-----BEGIN EC PRIVATE KEY-----"
            case .rsaPKCS1: "-----BEGIN RSA PRIVATE KEY-----"
            }
        #expect(leaf.keyPEM.hasPrefix(marker))
        try await Self.withTLSServer(leaf) { server, _ in
            let response = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.json?ns=forms", tls: try TestTLS.trusting(caPEM: authority.certificatePEM))
            #expect(response.status == 200)
        }
    }

    @Test func aChainFileWithAnIntermediateIsServedWhole() async throws {
        // The chain file may hold more than the leaf (an intermediate after it); the leaf is
        // the first and is the one served.
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue(serial: 1004)
        try await Self.withTLSServer(
            .init(certificatePEM: leaf.certificatePEM + "\n" + authority.certificatePEM, keyPEM: leaf.keyPEM, serial: leaf.serial)
        ) { server, _ in
            let connection = try await TestHTTPConnection.connect(port: server.port, tls: try TestTLS.trusting(caPEM: authority.certificatePEM))
            defer { connection.close() }
            #expect(try await connection.request("GET", "/.json").status == 200)
            #expect(try await connection.peerCertificateSerial() == leaf.serial)
        }
    }

    @Test func aReloadServesTheNewCertificateToNewConnectionsAndOpenOnesCarryOn() async throws {
        let authority = try TestCertificateAuthority()
        let first = try authority.issue(serial: 0x0AAA, commonName: "first")
        let second = try authority.issue(serial: 0x0BBB, commonName: "second")
        try await Self.withTLSServer(first) { server, files in
            let trust = try TestTLS.trusting(caPEM: authority.certificatePEM)
            let old = try await TestHTTPConnection.connect(port: server.port, tls: trust)
            defer { old.close() }
            #expect(try await old.request("PUT", "/a.json", body: "1").status == 200)
            #expect(try await old.peerCertificateSerial() == "0aaa")
            let realtime = try await TestClient.connect(port: server.port, tls: trust)

            try files.write(second)
            #expect(try server.reloadTLS()?.serial == "0bbb")
            #expect(server.tlsCertificate?.serial == "0bbb")

            let new = try await TestHTTPConnection.connect(port: server.port, tls: trust)
            defer { new.close() }
            #expect(try await new.request("GET", "/a.json").text == "1")
            #expect(try await new.peerCertificateSerial() == "0bbb")
            // The connections opened before the reload keep working.
            #expect(try await old.request("GET", "/a.json").text == "1")
            let written = try await realtime.request("p", try JSONParser.parse(#"{"p":"/a","d":2}"#))
            #expect(written.last?["d"]?["b"]?["s"]?.stringValue == "ok")
            await realtime.close()
        }
    }

    @Test func aReloadOfBadFilesKeepsTheCertificateInForce() async throws {
        let authority = try TestCertificateAuthority()
        let first = try authority.issue(serial: 0x0CCC)
        let other = try authority.issue(serial: 0x0DDD)
        try await Self.withTLSServer(first) { server, files in
            try files.write(certificate: "not a certificate\n", key: first.keyPEM)
            #expect(throws: TLSFileError.noCertificate(file: files.certificate)) { try server.reloadTLS() }
            try files.write(certificate: other.certificatePEM, key: first.keyPEM)
            #expect(throws: TLSFileError.keyDoesNotMatchCertificate(certificateFile: files.certificate, keyFile: files.key)) {
                try server.reloadTLS()
            }
            #expect(server.tlsCertificate?.serial == "0ccc")
            let connection = try await TestHTTPConnection.connect(port: server.port, tls: try TestTLS.trusting(caPEM: authority.certificatePEM))
            defer { connection.close() }
            #expect(try await connection.request("GET", "/.json").status == 200)
            #expect(try await connection.peerCertificateSerial() == "0ccc")
        }
    }

    @Test func aPlainTextClientOnTheTLSPortGetsA400AndAClose() async throws {
        let authority = try TestCertificateAuthority()
        try await Self.withTLSServer(try authority.issue(serial: 1005)) { server, _ in
            let raw = try await RawConnection.connect(port: server.port)
            try await raw.send("GET /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(await raw.waitForClose(timeout: .seconds(5)))
            let answer = raw.receivedText
            #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
            #expect(answer.contains("Connection: close\r\n"))
            #expect(answer.hasSuffix(#"{"error":"This port speaks TLS: use https:// (or wss://)"}"#))
            // The server goes on serving TLS.
            let response = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.json", tls: try TestTLS.trusting(caPEM: authority.certificatePEM))
            #expect(response.status == 200)
        }
    }

    @Test func aClientThatDoesNotTrustTheCertificateIsRefused() async throws {
        let authority = try TestCertificateAuthority()
        let stranger = try TestCertificateAuthority(commonName: "Someone else")
        try await Self.withTLSServer(try authority.issue(serial: 1006)) { server, _ in
            await #expect(throws: (any Error).self) {
                _ = try await TestHTTPConnection.request(
                    port: server.port, "GET", "/.json", tls: try TestTLS.trusting(caPEM: stranger.certificatePEM))
            }
            let response = try await TestHTTPConnection.request(
                port: server.port, "GET", "/.json", tls: try TestTLS.trusting(caPEM: authority.certificatePEM))
            #expect(response.status == 200)
        }
    }

    @Test func anExpiredCertificateIsServedButSaidToBeExpiredAndClientsRefuseIt() async throws {
        let authority = try TestCertificateAuthority()
        try await Self.withTLSServer(try authority.issue(serial: 1012, notValidAfter: Date() - 60)) { server, _ in
            #expect(server.tlsCertificate?.isExpired == true)
            await #expect(throws: (any Error).self) {
                _ = try await TestHTTPConnection.request(
                    port: server.port, "GET", "/.json", tls: try TestTLS.trusting(caPEM: authority.certificatePEM))
            }
        }
        try await Self.withTLSServer(try authority.issue(serial: 1013)) { server, _ in
            #expect(server.tlsCertificate?.isExpired == false)
        }
    }

    @Test func tlsDoesNotLiftProtectedMode() async throws {
        let authority = try TestCertificateAuthority()
        let files = try Files()
        defer { files.remove() }
        try files.write(try authority.issue(serial: 1014))
        await #expect(throws: ProtectedMode.Refusal.self) {
            let server = try await KindlingServer.start(ServerConfiguration(host: "0.0.0.0", port: 0, tls: files.tls, logger: Self.quietLogger))
            try await server.shutdown()
        }
    }

    @Test func aKeyThatDoesNotMatchTheCertificateIsRefusedAtStart() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue(serial: 1007)
        let other = try authority.issue(serial: 1008)
        let files = try Files()
        defer { files.remove() }
        try files.write(certificate: leaf.certificatePEM, key: other.keyPEM)
        await #expect(throws: TLSFileError.keyDoesNotMatchCertificate(certificateFile: files.certificate, keyFile: files.key)) {
            let server = try await KindlingServer.start(ServerConfiguration(port: 0, tls: files.tls, logger: Self.quietLogger))
            try await server.shutdown()
        }
        let error = TLSFileError.keyDoesNotMatchCertificate(certificateFile: files.certificate, keyFile: files.key)
        #expect(error.description.contains(files.key) && error.description.contains(files.certificate))
    }

    @Test func badFilesAreRefusedAtStartNamingTheFile() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue(serial: 1009)
        let files = try Files()
        defer { files.remove() }
        func start() async throws {
            let server = try await KindlingServer.start(ServerConfiguration(port: 0, tls: files.tls, logger: Self.quietLogger))
            try await server.shutdown()
        }
        await #expect {
            try await start()
        } throws: { error in
            guard case TLSFileError.unreadable(let file, _) = error else { return false }
            return file == files.certificate
        }
        try files.write(certificate: leaf.certificatePEM, key: leaf.certificatePEM)
        await #expect(throws: TLSFileError.noPrivateKey(file: files.key)) { try await start() }
        try files.write(certificate: leaf.certificatePEM, key: "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n")
        await #expect(throws: TLSFileError.encryptedPrivateKey(file: files.key)) { try await start() }
        try files.write(certificate: leaf.certificatePEM, key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        await #expect(throws: TLSFileError.invalidPrivateKey(file: files.key)) { try await start() }
        try files.write(certificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", key: leaf.keyPEM)
        await #expect(throws: TLSFileError.invalidCertificate(file: files.certificate)) { try await start() }
    }
}
