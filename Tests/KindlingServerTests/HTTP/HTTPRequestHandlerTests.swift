import KindlingCore
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import KindlingServer

/// The REST API and event streams on an embedded channel: the request handler with the
/// namespaces behind it but no socket.
@Suite(.timeLimit(.minutes(1)))
struct HTTPRequestHandlerTests {
    @Test func everyMethodAnswersAsTheRESTAPIDoes() async throws {
        try await EmbeddedServer.with { server in
            let http = try await EmbeddedHTTPConnection.open(server)
            var response = try await http.request(.PUT, "/users/jack.json?ns=t", body: #"{"first":"Jack","n":[1,2]}"#)
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "content-type") == "application/json; charset=utf-8")
            #expect(response.headers.first(name: "content-length") == String(response.body.utf8.count))
            #expect(response.headers.first(name: "access-control-allow-origin") == "*")
            #expect(response.body == #"{"first":"Jack","n":[1,2]}"#)
            #expect(try await http.request(.GET, "/users/jack/first.json?ns=t").body == #""Jack""#)
            response = try await http.request(.POST, "/users/jack/log.json?ns=t", body: #""ahoy""#)
            #expect(response.status == .ok)
            let name = try #require(try JSONParser.parse(response.body)["name"]?.stringValue)
            #expect(name.count == 20)
            #expect(try await http.request(.GET, "/users/jack/log/\(name).json?ns=t").body == #""ahoy""#)
            response = try await http.request(.PATCH, "/users/jack.json?ns=t", body: #"{"first":"J","log":null}"#)
            #expect(response.status == .ok && response.body == #"{"first":"J","log":null}"#)
            #expect(try await http.request(.GET, "/users/jack.json?ns=t").body == #"{"first":"J","n":[1,2]}"#)
            response = try await http.request(.DELETE, "/users/jack/n.json?ns=t")
            #expect(response.status == .ok && response.body == "null")
            #expect(try await http.request(.GET, "/users.json?ns=t").body == #"{"jack":{"first":"J"}}"#)
            response = try await http.request(.GET, "/missing.json?ns=t")
            #expect(response.status == .ok && response.body == "null")
            #expect(http.channel.isActive)
            try await http.finish()
        }
    }

    /// `print=silent` answers a write or a read 204, with neither body nor `Content-Length`.
    @Test func printSilentAnswers204WithoutABody() async throws {
        try await EmbeddedServer.with { server in
            let http = try await EmbeddedHTTPConnection.open(server)
            let write = try await http.request(.PUT, "/a.json?ns=t&print=silent", body: "1")
            #expect(write.status == .noContent && write.body.isEmpty && write.headers.first(name: "content-length") == nil)
            let read = try await http.request(.GET, "/a.json?ns=t&print=silent")
            #expect(read.status == .noContent && read.body.isEmpty)
            #expect(try await http.request(.GET, "/a.json?ns=t").body == "1")
            try await http.finish()
        }
    }

    /// Requests that cannot be served are answered with an error object, write nothing, and
    /// leave the connection open.
    @Test func badRequestsAreAnsweredWithAnErrorObject() async throws {
        try await EmbeddedServer.with { server in
            let http = try await EmbeddedHTTPConnection.open(server)
            let noJSON = try await http.request(.GET, "/a")
            #expect(noJSON.status == .notFound)
            #expect(noJSON.body == #"{"error":"append .json to your request URI to use the REST API"}"#)
            let badPath = try await http.request(.PUT, "/a$b.json?ns=t", body: "1")
            #expect(badPath.status == .badRequest)
            #expect(try JSONParser.parse(badPath.body)["error"]?.stringValue?.isEmpty == false)
            let badBody = try await http.request(.PUT, "/a.json?ns=t", body: #"{"x":"#)
            #expect(badBody.status == .badRequest)
            #expect(badBody.body == #"{"error":"Invalid data; couldn't parse JSON object, array, or value."}"#)
            let trace = try await http.request(.TRACE, "/a.json?ns=t")
            #expect(trace.status == .methodNotAllowed)
            #expect(trace.headers.first(name: "allow") == "GET, PUT, POST, PATCH, DELETE, OPTIONS")
            #expect(try await http.request(.GET, "/.json?ns=t").body == "null")
            #expect(http.channel.isActive)
            try await http.finish()
        }
    }

    /// A CORS preflight is answered 204, with the headers the browser asked to send allowed.
    @Test func aPreflightIsAnsweredWithTheCORSHeaders() async throws {
        try await EmbeddedServer.with { server in
            let http = try await EmbeddedHTTPConnection.open(server)
            let response = try await http.request(.OPTIONS, "/a.json?ns=t", headers: [("Access-Control-Request-Headers", "x-custom")])
            #expect(response.status == .noContent)
            #expect(response.headers.first(name: "access-control-max-age") == "86400")
            #expect(response.headers.first(name: "access-control-allow-headers") == "x-custom")
            #expect(response.headers.first(name: "access-control-allow-origin") == "*")
            #expect(response.headers.first(name: "access-control-allow-methods")?.contains("PATCH") == true)
            try await http.finish()
        }
    }

    /// A request that does not keep the connection alive (HTTP/1.0 without `keep-alive`) gets
    /// `Connection: close`, and the connection closes after the answer.
    @Test func aRequestNotKeptAliveClosesTheConnectionAfterItsAnswer() async throws {
        try await EmbeddedServer.with { server in
            let http = try await EmbeddedHTTPConnection.open(server)
            let response = try await http.request(.GET, "/a.json?ns=t", version: .http1_0)
            #expect(response.status == .ok && response.body == "null")
            #expect(response.headers.first(name: "connection") == "close")
            try await http.closed()
        }
    }

    /// A body declared larger than the REST limit is refused before it is read (413) and the
    /// connection closes; nothing is written.
    @Test func aBodyOverTheLimitIsRefusedBeforeItIsRead() async throws {
        try await EmbeddedServer.with({ $0.maxRESTBodyBytes = 16 }) { server in
            let http = try await EmbeddedHTTPConnection.open(server)
            try await http.sendHead(.PUT, "/a.json?ns=t", headers: [("Content-Length", "100")])
            let response = try await http.response()
            #expect(response.status == .payloadTooLarge)
            #expect(response.body == #"{"error":"Request body exceeds the 16-byte limit for a REST write"}"#)
            #expect(response.headers.first(name: "connection") == "close")
            try await http.closed()
            let other = try await EmbeddedHTTPConnection.open(server)
            #expect(try await other.request(.GET, "/a.json?ns=t").body == "null")
            try await other.finish()
        }
    }

    /// When the body budget refuses a body partway (`HTTPBodyRefused`), the handler lets go of
    /// what it gathered of it at once, not when the connection closes, which waits until the
    /// rest of the body has been dropped.
    @Test func aBodyTheBudgetRefusedIsLetGoOf() async throws {
        try await EmbeddedServer.with { server in
            let http = try await EmbeddedHTTPConnection.open(server)
            try await http.sendHead(.PUT, "/a.json?ns=t", headers: [("Content-Length", "100")])
            try await http.channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(string: "[" + String(repeating: "1,", count: 20))))
            let channel = http.channel
            let (wasReceiving, isIdle) = try await channel.testingEventLoop.executeInContext { () throws -> (Bool, Bool) in
                let handler = try channel.pipeline.syncOperations.handler(type: HTTPRequestHandler.self)
                guard case .receiving = handler.state else { return (false, false) }
                channel.pipeline.syncOperations.fireUserInboundEventTriggered(HTTPBodyRefused())
                guard case .idle = handler.state else { return (true, false) }
                return (true, true)
            }
            #expect(wasReceiving && isIdle)
            try await http.finish()
        }
    }

    /// `Accept: text/event-stream` opens a stream: its head, a `put` of the whole location, a
    /// `put` for each change there, and a keep-alive each interval (the channel's clock, moved
    /// by the test: no waiting).
    @Test func anEventStreamSendsThePutOfTheLocationThenChangesAndKeepAlives() async throws {
        try await EmbeddedServer.with({ $0.eventStreamKeepAlive = .seconds(30) }) { server in
            let writer = try await EmbeddedHTTPConnection.open(server)
            _ = try await writer.request(.PUT, "/room.json?ns=t", body: #"{"a":1}"#)
            let stream = try await EmbeddedHTTPConnection.open(server)
            try await stream.send(.GET, "/room.json?ns=t", headers: [("Accept", "text/event-stream")])
            let head = try await stream.nextHead()
            #expect(head.status == .ok)
            #expect(head.headers.first(name: "content-type") == "text/event-stream; charset=utf-8")
            #expect(head.headers.first(name: "content-length") == nil)
            #expect(try await stream.nextBody() == "event: put\ndata: {\"path\":\"/\",\"data\":{\"a\":1}}\n\n")
            _ = try await writer.request(.PUT, "/room/b.json?ns=t", body: "2")
            #expect(try await stream.nextBody() == "event: put\ndata: {\"path\":\"/b\",\"data\":2}\n\n")
            await stream.channel.testingEventLoop.advanceTime(by: .seconds(30))
            #expect(try await stream.nextBody() == "event: keep-alive\ndata: null\n\n")
            try await stream.finish()
            try await writer.finish()
        }
    }
}
