import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import kindling

#if canImport(Glibc)
import Glibc
#endif

/// What a client command says when the server cannot be reached: what happened and what to
/// check, not the failed socket call.
struct ConnectionFailureTests {
    @Test func aPortNothingListensOnIsSaidToRefuse() async throws {
        // Port 1 on loopback: nothing listens there on a test machine.
        let request = ServerRequest(method: .GET, url: try #require(URL(string: "http://127.0.0.1:1/a.json")), timeout: .seconds(20))
        do {
            _ = try await request.send()
            Issue.record("a request to 127.0.0.1:1 was answered")
        } catch {
            #expect(error.description.hasPrefix("connection refused: nothing listens on that port"), "\(error)")
            #expect(!error.description.contains("errno"), "\(error)")
        }
    }

    @Test func socketErrorsAreNamedAndOthersKeepTheirOwnWords() {
        #expect(ConnectionFailure.reason(IOError(errnoCode: ECONNREFUSED, reason: "connect")).hasPrefix("connection refused"))
        #expect(ConnectionFailure.reason(IOError(errnoCode: EHOSTUNREACH, reason: "connect")) == "no route to the host")
        #expect(ConnectionFailure.reason(IOError(errnoCode: EACCES, reason: "connect")).contains("errno: \(EACCES)"))
        struct Other: Error, CustomStringConvertible { var description: String { "something else" } }
        #expect(ConnectionFailure.reason(Other()) == "something else")
    }
}
