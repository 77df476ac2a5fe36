import KindlingCore
import KindlingServer
import KindlingTesting
import Testing

/// REST event streams (`Accept: text/event-stream`), and their agreement with WebSocket listens.
@Suite(.timeLimit(.minutes(2)))
struct EventStreamTests {
    func openStream(_ port: Int, _ uri: String) async throws -> TestHTTPConnection {
        let stream = try await TestHTTPConnection.connect(port: port)
        try await stream.send("GET", uri, headers: [("Accept", "text/event-stream")])
        let head = try await stream.responseHead()
        #expect(head.status == 200)
        #expect(head.header("content-type") == "text/event-stream; charset=utf-8")
        #expect(head.header("transfer-encoding") == "chunked")
        return stream
    }

    /// The next event that is not a keep-alive, as `name data`.
    func next(_ stream: TestHTTPConnection) async throws -> String {
        while true {
            let event = try await stream.nextEvent()
            #expect(!event.raw.contains("\r"))
            if event.event == "keep-alive" {
                #expect(event.raw == "event: keep-alive\ndata: null")
                continue
            }
            return "\(event.event ?? "?") \(event.data ?? "?")"
        }
    }

    @Test func initialPutThenPutsAndPatches() async throws {
        try await RESTTests.withServer { server in
            let port = server.port
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/room.json?ns=t", body: #"{"a":1,"list":[1,2]}"#)
            let stream = try await openStream(port, "/room.json?ns=t")
            defer { stream.close() }
            #expect(try await next(stream) == #"put {"path":"/","data":{"a":1,"list":[1,2]}}"#)
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/room/a.json?ns=t", body: #""héllo ✓""#)
            #expect(try await next(stream) == #"put {"path":"/a","data":"héllo ✓"}"#)
            _ = try await TestHTTPConnection.request(port: port, "PATCH", "/room.json?ns=t", body: #"{"b":2,"a":null}"#)
            #expect(try await next(stream) == #"patch {"path":"/","data":{"b":2,"a":null}}"#)
            _ = try await TestHTTPConnection.request(port: port, "PATCH", "/room.json?ns=t", body: #"{"c/d":3}"#)
            #expect(try await next(stream) == #"put {"path":"/c/d","data":3}"#)
            let pushed = try await TestHTTPConnection.request(port: port, "POST", "/room/list.json?ns=t", body: "3")
            let name = try #require(try pushed.json()["name"]?.stringValue)
            #expect(try await next(stream) == #"put {"path":"/list/\#(name)","data":3}"#)
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/.json?ns=t", body: #"{"room":{"z":true},"other":1}"#)
            #expect(try await next(stream) == #"put {"path":"/","data":{"z":true}}"#)
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/other.json?ns=t", body: "2")
            _ = try await TestHTTPConnection.request(port: port, "DELETE", "/room.json?ns=t")
            #expect(try await next(stream) == #"put {"path":"/","data":null}"#)
        }
    }

    /// `format=export` on a stream gives its events' data in the export form (priorities kept,
    /// no arrays), as it does a GET's; a plain stream at the same place is not changed by it.
    @Test func anExportStreamKeepsPriorities() async throws {
        try await RESTTests.withServer { server in
            let port = server.port
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/pe.json?ns=t", body: #"{"d":{".value":1,".priority":2},"list":[5]}"#)
            let export = try await openStream(port, "/pe.json?ns=t&format=export")
            defer { export.close() }
            let plain = try await openStream(port, "/pe.json?ns=t")
            defer { plain.close() }
            #expect(try await next(export) == #"put {"path":"/","data":{"d":{".value":1,".priority":2},"list":{"0":5}}}"#)
            #expect(try await next(plain) == #"put {"path":"/","data":{"d":1,"list":[5]}}"#)
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/pe/e.json?ns=t", body: #"{"x":true,".priority":"p"}"#)
            #expect(try await next(export) == #"put {"path":"/e","data":{"x":true,".priority":"p"}}"#)
            #expect(try await next(plain) == #"put {"path":"/e","data":{"x":true}}"#)
            _ = try await TestHTTPConnection.request(port: port, "PATCH", "/pe.json?ns=t", body: #"{"d":{".value":3,".priority":4},"f":7}"#)
            #expect(try await next(export) == #"patch {"path":"/","data":{"d":{".value":3,".priority":4},"f":7}}"#)
            #expect(try await next(plain) == #"patch {"path":"/","data":{"d":3,"f":7}}"#)
            // The stream and a GET in export form agree.
            let read = try await TestHTTPConnection.request(port: port, "GET", "/pe.json?ns=t&format=export")
            #expect(read.text == #"{"d":{".value":3,".priority":4},"e":{"x":true,".priority":"p"},"f":7,"list":{"0":5}}"#)
        }
    }

    @Test func aStreamWithAFormatItCannotTakeIsRefused() async throws {
        try await RESTTests.withServer { server in
            let response = try await TestHTTPConnection.request(
                port: server.port, "GET", "/pe.json?ns=t&format=bogus", headers: [("Accept", "text/event-stream")])
            #expect(response.status == 400)
            #expect(response.text.contains("format"))
        }
    }

    /// A multi-path update is one `patch` at the deepest path its entries share, keys relative
    /// to it, never one `put` per path (a mirror would pass through half of the update); a
    /// mirror that applies the events holds what a GET returns after each update.
    @Test func multiPathUpdatesAreOnePatchEach() async throws {
        try await RESTTests.withServer { server in
            let port = server.port
            _ = try await TestHTTPConnection.request(port: port, "PUT", "/m.json?ns=t", body: #"{"a":{"x":0,"keep":true},"c":1}"#)
            let stream = try await openStream(port, "/m.json?ns=t")
            defer { stream.close() }
            var mirror = Node.empty
            func apply(_ text: String) throws {
                let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
                let data = try JSONParser.parse(parts[1])
                let path = try Path(try #require(data["path"]?.stringValue))
                switch parts[0] {
                case "put": mirror = mirror.setting(try Node(jsonText: JSONWriter.string(try #require(data["data"]))), at: path)
                case "patch":
                    guard case .object(let members) = try #require(data["data"]) else {
                        Issue.record("a patch's data is not an object: \(text)")
                        return
                    }
                    for member in members {
                        mirror = mirror.setting(try Node(jsonText: JSONWriter.string(member.value)), at: path.appending(try Path(member.key)))
                    }
                default: Issue.record("unexpected event \(text)")
                }
            }
            func mirrorMatchesGet() async throws {
                let body = try await TestHTTPConnection.request(port: port, "GET", "/m.json?ns=t").text
                #expect(mirror == (try Node(jsonText: body)))
            }
            try apply(try await next(stream))
            try await mirrorMatchesGet()
            let updates: [(uri: String, body: String, event: String)] = [
                ("/m.json?ns=t", #"{"a/x":1,"a/y":2}"#, #"patch {"path":"/a","data":{"x":1,"y":2}}"#),
                ("/m/a.json?ns=t", #"{"deep/p":1,"deep/q/r":2}"#, #"patch {"path":"/a/deep","data":{"p":1,"q/r":2}}"#),
                ("/m.json?ns=t", #"{"a/x":3,"b/z":4,"c":null}"#, #"patch {"path":"/","data":{"a/x":3,"b/z":4,"c":null}}"#),
                // Above the stream: only the entries inside it, as one patch at the location.
                ("/.json?ns=t", #"{"m/a/x":5,"m/a/y":6,"other":1}"#, #"patch {"path":"/a","data":{"x":5,"y":6}}"#),
            ]
            for (offset, update) in updates.enumerated() {
                let response = try await TestHTTPConnection.request(port: port, "PATCH", update.uri, body: update.body)
                #expect(response.status == 200)
                let event = try await next(stream)
                #expect(event == update.event)
                try apply(event)
                try await mirrorMatchesGet()
                // Nothing else came from the update: the next event is the marker's.
                _ = try await TestHTTPConnection.request(port: port, "PUT", "/m/marker.json?ns=t", body: "\(offset)")
                let marker = try await next(stream)
                #expect(marker == #"put {"path":"/marker","data":\#(offset)}"#)
                try apply(marker)
            }
        }
    }

    @Test func keepAlivesArrive() async throws {
        try await RESTTests.withServer { server in
            let stream = try await openStream(server.port, "/k.json?ns=t")
            defer { stream.close() }
            #expect(try await stream.nextEvent().raw == #"event: put"# + "\n" + #"data: {"path":"/","data":null}"#)
            // Sent every 200 ms (RESTTests' server); the wait only bounds a test that fails.
            let event = try await stream.nextEvent(timeout: .seconds(10))
            #expect(event.raw == "event: keep-alive\ndata: null")
        }
    }

    @Test func queryStreamsSeeTheirWindow() async throws {
        try await RESTTests.withServer { server in
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/s.json?ns=t", body: #"{"a":1,"b":2,"c":3}"#)
            let stream = try await openStream(server.port, "/s.json?ns=t&orderBy=%22$value%22&limitToLast=1")
            defer { stream.close() }
            #expect(try await next(stream) == #"put {"path":"/","data":{"c":3}}"#)
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/s/a.json?ns=t", body: "9")
            #expect(try await next(stream) == #"put {"path":"/","data":{"a":9}}"#)
        }
    }

    @Test func webSocketListenersAndStreamsSeeTheSameWrites() async throws {
        try await RESTTests.withServer { server in
            let client = try await TestClient.connect(port: server.port, namespace: "t")
            _ = try await client.request("q", try JSONParser.parse(#"{"p":"/w","h":""}"#))
            let stream = try await openStream(server.port, "/w.json?ns=t")
            defer { stream.close() }
            #expect(try await next(stream) == #"put {"path":"/","data":null}"#)
            _ = try await TestHTTPConnection.request(port: server.port, "PUT", "/w/x.json?ns=t", body: "1")
            _ = try await client.sendRequest("p", try JSONParser.parse(#"{"p":"/w/y","d":2}"#))
            _ = try await TestHTTPConnection.request(port: server.port, "PATCH", "/w.json?ns=t", body: #"{"x":3}"#)
            var pushes: [String] = []
            for _ in 0..<3 {
                var message = try await client.nextMessage()
                while message["d"]?["r"] != nil { message = try await client.nextMessage() }
                let body = try #require(message["d"]?["b"])
                pushes.append("\(message["d"]?["a"]?.stringValue ?? "?") \(body["p"]?.stringValue ?? "") \(JSONWriter.string(body["d"] ?? .null))")
            }
            #expect(pushes == ["d w/x 1", "d w/y 2", #"m w {"x":3}"#])
            #expect(try await next(stream) == #"put {"path":"/x","data":1}"#)
            #expect(try await next(stream) == #"put {"path":"/y","data":2}"#)
            #expect(try await next(stream) == #"patch {"path":"/","data":{"x":3}}"#)
            await client.close()
        }
    }

    @Test func closingAStreamUnsubscribesIt() async throws {
        try await RESTTests.withServer { server in
            let stream = try await openStream(server.port, "/gone.json?ns=t")
            _ = try await stream.nextEvent()
            stream.close()
            #expect(await stream.waitForClose())
            // Writes after the close still succeed (nothing is sent to the stream that went away).
            let response = try await TestHTTPConnection.request(port: server.port, "PUT", "/gone.json?ns=t", body: "1")
            #expect(response.status == 200)
        }
    }
}
