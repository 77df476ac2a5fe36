import Crypto
import Foundation
import KindlingClient
import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// Every awaited call of the SDK ends: a refused credential throws whenever it is decided, and a
/// read with no server fails as offline, or answers from a listener's data, and stops when its
/// task is cancelled.
@Suite(.timeLimit(.minutes(2)))
struct FailFastTests {
    /// A server that verifies tokens (no key configured, so every token is refused) and lets
    /// anyone read.
    static func withVerifyingServer(_ body: (Int) async throws -> Void) async throws {
        var logger = Logger(label: "kindling-client-test")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(port: 0, logger: logger)
        configuration.auth = AuthSettings(emulatorMode: false)
        configuration.rules = try RulesDocument.parse(#"{"rules":{".read":true}}"#)
        try await KindlingServer.run(configuration) { server in try await body(server.port) }
    }

    @Test func aRefusedCredentialThrowsBeforeAndAfterTheConnectionIsUp() async throws {
        try await Self.withVerifyingServer { port in
            // Before: called right after the database is made, while it connects.
            let early = try Database(url: "http://127.0.0.1:\(port)?ns=early")
            defer { early.shutdown() }
            let before = await #expect(throws: DatabaseError.self) {
                try await early.authenticate(with: AuthenticatedDatabaseTests.token("alice"))
            }
            #expect(before?.serverStatus != nil, "\(String(describing: before))")
            #expect(before?.localizedDescription.hasPrefix("Authenticate at / was refused") == true)

            // After: the connection is up (a read has been answered).
            let late = try Database(url: "http://127.0.0.1:\(port)?ns=late")
            defer { late.shutdown() }
            _ = try await late.reference("x").getData()
            let after = await #expect(throws: DatabaseError.self) { try await late.authenticate(with: "not.a.token") }
            #expect(after?.serverStatus != nil, "\(String(describing: after))")
        }
    }

    @Test func aReadWithNoServerFailsAsOfflineAfterTheConnectTimeout() async throws {
        // Port 1 refuses every connection on loopback.
        let database = try Database(url: "http://127.0.0.1:1?ns=nowhere")
        defer { database.shutdown() }
        let started = ContinuousClock.now
        let error = await #expect(throws: DatabaseError.self) { try await database.reference("rooms/a").getData() }
        #expect(error == .offline(operation: "get", path: "/rooms/a"))
        #expect(ContinuousClock.now - started < .seconds(30))
        let denied = await #expect(throws: DatabaseError.self) { try await database.authenticate(with: "a.b.c") }
        #expect(denied == .offline(operation: "authenticate", path: "/"))
    }

    @Test func aCancelledReadStopsWaitingAtOnce() async throws {
        let database = try Database(url: "http://127.0.0.1:1?ns=nowhere")
        defer { database.shutdown() }
        let reference = database.reference("rooms")
        let read = Task { try await reference.getData() }
        read.cancel()
        let result = await read.result
        #expect(throws: DatabaseError.cancelled(operation: "get", path: "/rooms")) { try result.get() }
    }

    @Test func aReadOfflineIsAnsweredFromWhatAListenerHolds() async throws {
        try await KindlingTesting.withServer(label: "kindling-client-test") { server in
            let database = try Database(url: "http://127.0.0.1:\(server.port)?ns=cached")
            defer { database.shutdown() }
            let rooms = database.reference("rooms")
            try await rooms.child("a").setValue(.number(1))
            let (values, continuation) = AsyncStream.makeStream(of: String.self)
            rooms.observe(.value) { continuation.yield($0.exportText) }
            var iterator = values.makeAsyncIterator()
            #expect(await iterator.next() == #"{"a":1}"#)
            database.goOffline()
            // At once, from the listener's data: no connection is waited for.
            #expect(try await rooms.child("a").getData().exportText == "1")
            #expect(try await rooms.queryOrderedByKey().queryLimited(toFirst: 1).getData().exportText == #"{"a":1}"#)
            // A location no listener covers has no data to answer from.
            await #expect(throws: DatabaseError.offline(operation: "get", path: "/other")) { try await database.reference("other").getData() }
        }
    }

    @Test func theClientsOwnInfoIsAnsweredByTheClient() async throws {
        try await KindlingTesting.withServer(label: "kindling-client-test") { server in
            let database = try Database(url: "http://127.0.0.1:\(server.port)?ns=info")
            defer { database.shutdown() }
            let (offsets, continuation) = AsyncStream.makeStream(of: Double.self)
            database.reference(".info/serverTimeOffset").observe(.value) { continuation.yield(($0.value as? Double) ?? .nan) }
            var iterator = offsets.makeAsyncIterator()
            // The value before the handshake (0), then the handshake's, in whole milliseconds.
            #expect(await iterator.next() == 0)
            _ = try await database.reference("x").getData()
            let offset = try #require(await iterator.next())
            #expect(offset == offset.rounded() && abs(offset) < 60_000)
            // A read of the client's own data never reaches the server (which has none).
            #expect(try await database.reference(".info/connected").getData().value as? Bool == true)
            #expect(database.reference(".info/serverTimeOffset").key == "serverTimeOffset")
        }
    }

    /// An HS256 token with `claims`, signed with `secret`.
    static func hs256(_ claims: String, secret: String) -> String {
        func encode(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let signed = encode(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + encode(Data(claims.utf8))
        let signature = HMAC<SHA256>.authenticationCode(for: Data(signed.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return signed + "." + encode(Data(signature))
    }

    @Test(arguments: ["expired", "foreign key", "good"])
    func anExpiredOrForeignTokenThrowsBeforeAndAfterTheConnectionIsUp(kind: String) async throws {
        let secret = "kindling-client-test-secret-of-32-bytes"
        let now = Int(Date().timeIntervalSince1970)
        let token: String
        switch kind {
        case "expired": token = Self.hs256(#"{"sub":"ada","iat":\#(now - 7200),"exp":\#(now - 3600)}"#, secret: secret)
        case "foreign key": token = Self.hs256(#"{"sub":"ada","iat":\#(now),"exp":\#(now + 3600)}"#, secret: "a-key-this-server-does-not-know-0123")
        default: token = Self.hs256(#"{"sub":"ada","iat":\#(now),"exp":\#(now + 3600)}"#, secret: secret)
        }
        var logger = Logger(label: "kindling-client-test")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(port: 0, logger: logger)
        configuration.auth = AuthSettings(hmacSecrets: [secret])
        configuration.rules = try RulesDocument.parse(#"{"rules":{".read":true}}"#)
        try await KindlingServer.run(configuration) { server in
            let url = "http://127.0.0.1:\(server.port)?ns=tokens"
            let early = try Database(url: url)
            defer { early.shutdown() }
            let late = try Database(url: url)
            defer { late.shutdown() }
            _ = try await late.reference("x").getData()
            for database in [early, late] {
                if kind == "good" {
                    try await database.authenticate(with: token)
                } else {
                    let error = await #expect(throws: DatabaseError.self) { try await database.authenticate(with: token) }
                    #expect(error?.serverStatus != nil, "\(String(describing: error))")
                }
            }
        }
    }

    @Test func purgedWritesAreUndoneAndTheirCompletionsCancelled() async throws {
        try await KindlingTesting.withServer(label: "kindling-client-test") { server in
            let database = try Database(url: "http://127.0.0.1:\(server.port)?ns=purge")
            defer { database.shutdown() }
            try await database.reference("a").setValue(0)
            let (values, continuation) = AsyncStream.makeStream(of: String.self)
            database.reference("a").observe(.value, on: DispatchQueue(label: "purge")) { continuation.yield($0.jsonValue.description) }
            var seen = values.makeAsyncIterator()
            #expect(await seen.next() == "0")
            database.goOffline()
            let (errors, reported) = AsyncStream.makeStream(of: String.self)
            database.reference("a").setValue(1) { error, _ in reported.yield(error?.localizedDescription ?? "none") }
            #expect(await seen.next() == "1")
            database.purgeOutstandingWrites()
            // Undone: the server's data shows again, and the write is never sent.
            #expect(await seen.next() == "0")
            var completions = errors.makeAsyncIterator()
            #expect(await completions.next() == "Set at /a was cancelled")
            database.goOnline()
            #expect(try await database.reference("a").getData().value as? Int == 0)
        }
    }

    @Test func theLogShowsTheConnectionWhenTurnedOn() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            Database.setLoggingEnabled(true)
            let database = try Database(url: "http://127.0.0.1:1?ns=logged")
            // Fails as offline after the connect timeout, by when a connection was tried.
            _ = try? await database.reference("x").getData()
            database.shutdown()
        }
        let log = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(log.contains("[Kindling] connecting to 127.0.0.1:1 (connection 1, namespace logged)"), "\(log)")
        #expect(log.contains("[Kindling] connection 1 closed"), "\(log)")
    }
}
