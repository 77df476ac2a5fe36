import KindlingCore
import KindlingServer
import KindlingTesting
import Logging
import Testing

/// Limits a client sends over REST, with or without an event stream, are range-checked as on the
/// realtime side: no count can overflow the window arithmetic and end the process.
@Suite(.timeLimit(.minutes(2)))
struct QueryLimitTests {
    static let huge = "9223372036854775807"

    @Test func aHugeRESTLimitIsAnInvalidQueryAndTheServerLives() async throws {
        try await RESTTests.withServer { server in
            let http = try await TestHTTPConnection.connect(port: server.port)
            defer { http.close() }
            let put = try await http.request("PUT", "/s.json?ns=t", body: #"{"a":1,"b":2,"c":3}"#)
            #expect(put.status == 200)
            for order in ["%22$key%22", "%22$value%22", "%22$priority%22"] {
                for limit in ["limitToFirst", "limitToLast"] {
                    let response = try await http.request("GET", "/s.json?ns=t&orderBy=\(order)&startAt=%22b%22&\(limit)=\(Self.huge)")
                    #expect(response.status == 400, "\(order) \(limit)")
                    #expect(response.text.contains("\(limit) must be at most 2147483647"))
                }
            }
            // Over an event stream too (this used to trap in the sorted index).
            let stream = try await TestHTTPConnection.connect(port: server.port)
            defer { stream.close() }
            let refused = try await stream.request(
                "GET", "/s.json?ns=t&orderBy=%22$value%22&startAt=2&limitToFirst=\(Self.huge)",
                headers: [("Accept", "text/event-stream")]
            )
            #expect(refused.status == 400)
            // The largest limit allowed is answered, with the whole range.
            let largest = try await http.request("GET", "/s.json?ns=t&orderBy=%22$key%22&startAt=%22b%22&limitToFirst=2147483647")
            #expect(largest.status == 200 && largest.text == #"{"b":2,"c":3}"#)
            let last = try await http.request("GET", "/s.json?ns=t&orderBy=%22$value%22&startAt=2&limitToLast=2147483647")
            #expect(last.status == 200 && last.text == #"{"b":2,"c":3}"#)
        }
    }

    @Test func theLargestLimitOverAnEventStreamKeepsTheWholeRange() async throws {
        try await RESTTests.withServer { server in
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/s.json?ns=t", body: #"{"a":1,"b":2,"c":3}"#)
            let stream = try await TestHTTPConnection.connect(port: server.port)
            defer { stream.close() }
            try await stream.send(
                "GET", "/s.json?ns=t&orderBy=%22$value%22&startAt=2&limitToFirst=2147483647",
                headers: [("Accept", "text/event-stream")]
            )
            #expect(try await stream.responseHead().status == 200)
            let first = try await stream.nextEvent()
            #expect(first.data?.contains(#""data":{"b":2,"c":3}"#) == true)
        }
    }
}
