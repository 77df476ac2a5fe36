import Foundation
import KindlingCore
import KindlingTesting
import Testing

@testable import KindlingServer

/// Reads of the past over REST: `at=` and `changes=true`, for admins only.
struct PastReadTests {
    static let admin = [("Authorization", "Bearer owner")]

    /// Requests on a fresh connection each, so a loaded machine's pause between two requests
    /// cannot outlast the server's timeouts on a kept-alive one.
    struct Requests {
        let port: Int

        func request(_ method: String, _ uri: String, headers: [(String, String)] = [], body: String? = nil) async throws -> TestHTTPResponse {
            try await TestHTTPConnection.request(port: port, method, uri, headers: headers, body: body)
        }
    }

    static func withStoredServer(_ body: (KindlingServer, Requests) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "kindling-past-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withServer(label: "past-read-tests", { $0.storage = StorageConfiguration(directory: directory) }) { server in
            try await body(server, Requests(port: server.port))
        }
    }

    static func first(_ list: JSONValue) -> JSONValue? {
        if case .array(let items) = list { return items.first }
        return nil
    }

    /// Waits until the clock has passed `time`, so the next write is committed after it.
    static func pass(_ time: Int64) async {
        while HistoryTime.now() <= time { await Task.yield() }
    }

    @Test func anAdminReadsTheDataAsItWasAndTheWritesThatChangedIt() async throws {
        try await Self.withStoredServer { _, http in
            #expect(try await http.request("PUT", "/users/ada.json?ns=app", body: #"{"n":1,"pet":"cat"}"#).status == 200)
            #expect(try await http.request("PUT", "/rooms/r1.json?ns=app", body: #""open""#).status == 200)
            var response = try await http.request("GET", "/users.json?ns=app&changes=true", headers: Self.admin)
            #expect(response.status == 200)
            let listed = try response.json()
            guard case .array(let changes) = listed, changes.count == 1 else {
                Issue.record("expected one change, got \(response.text)")
                return
            }
            #expect(changes[0]["kind"]?.stringValue == "set")
            #expect(changes[0]["path"]?.stringValue == "/users/ada")
            #expect(changes[0]["sequence"]?.numberValue == 1)
            let written = try #require(changes[0]["time"]?.numberValue.map { Int64($0) })
            await Self.pass(written)
            // The mistake.
            #expect(try await http.request("PUT", "/users.json?ns=app", body: "null").status == 200)
            #expect(try await http.request("GET", "/users.json?ns=app").text == "null")

            response = try await http.request("GET", "/users.json?ns=app&at=\(written)", headers: Self.admin)
            #expect(response.status == 200)
            #expect(response.text == #"{"ada":{"n":1,"pet":"cat"}}"#)
            #expect(try await http.request("GET", "/users/ada/pet.json?ns=app&at=\(written)", headers: Self.admin).text == #""cat""#)
            #expect(try await http.request("GET", "/users.json?ns=app&at=\(written - 1)", headers: Self.admin).text == "null")
            let iso = HistoryTime.iso8601(written)
            #expect(try await http.request("GET", "/users.json?ns=app&at=\(iso)&print=pretty", headers: Self.admin).status == 200)
            // Now and later are the present.
            #expect(
                try await http.request("GET", "/.json?ns=app&at=\(HistoryTime.now() + 60_000)", headers: Self.admin).text
                    == #"{"rooms":{"r1":"open"}}"#)

            response = try await http.request("GET", "/users/ada.json?ns=app&changes=true&from=\(written + 1)", headers: Self.admin)
            let later = Self.first(try response.json())
            #expect(later?["kind"]?.stringValue == "remove")
            #expect(later?["path"]?.stringValue == "/users")
            let rooms = Self.first(try await http.request("GET", "/rooms.json?ns=app&changes=true&limit=5", headers: Self.admin).json())
            #expect(rooms?["sequence"]?.numberValue == 2)
        }
    }

    @Test func thePastIsForAdminsAndAsksForAValidInstant() async throws {
        try await Self.withStoredServer { _, http in
            #expect(try await http.request("PUT", "/a.json?ns=app", body: "1").status == 200)
            #expect(try await http.request("GET", "/a.json?ns=app&at=1").status == 401)
            #expect(try await http.request("GET", "/a.json?ns=app&changes=true").status == 401)
            let bad = try await http.request("GET", "/a.json?ns=app&at=yesterday", headers: Self.admin)
            #expect(bad.status == 400)
            #expect(bad.text.contains("ISO 8601"))
            #expect(try await http.request("GET", "/a.json?ns=app&at=1&orderBy=%22n%22", headers: Self.admin).status == 400)
            #expect(try await http.request("PUT", "/a.json?ns=app&at=1", headers: Self.admin, body: "2").status == 400)
            #expect(try await http.request("GET", "/a.json?ns=app&changes=true&limit=0", headers: Self.admin).status == 400)
            // Before the first write the namespace was empty; a namespace never written has no past.
            #expect(try await http.request("GET", "/a.json?ns=app&at=1", headers: Self.admin).text == "null")
            #expect(try await http.request("GET", "/a.json?ns=never&at=1", headers: Self.admin).text == "null")
        }
    }

    @Test func aServerWithoutADataDirectorySaysItKeepsNoHistory() async throws {
        try await withServer(label: "past-read-tests") { server in
            let http = Requests(port: server.port)
            #expect(try await http.request("PUT", "/a.json?ns=app", body: "1").status == 200)
            let response = try await http.request("GET", "/a.json?ns=app&at=1", headers: Self.admin)
            #expect(response.status == 400)
            #expect(response.text.contains("--in-memory"))
        }
    }
}

/// With `--history-writers`, each listed change says who made it.
struct HistoryWritersTests {
    @Test func eachChangeNamesItsWriter() async throws {
        let directory = NSTemporaryDirectory() + "kindling-writers-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var policy = HistoryPolicy.standard
        policy.recordsWriters = true
        try await withServer(label: "history-writers-tests", { $0.storage = StorageConfiguration(directory: directory, history: policy) }) { server in
            let http = PastReadTests.Requests(port: server.port)
            let asAda = "auth_variable_override=" + #"{"uid":"ada"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(try await http.request("PUT", "/notes/a.json?ns=app&\(asAda)", headers: PastReadTests.admin, body: "1").status == 200)
            #expect(try await http.request("PATCH", "/notes.json?ns=app", headers: PastReadTests.admin, body: #"{"b":2}"#).status == 200)
            #expect(try await http.request("DELETE", "/notes/a.json?ns=app").status == 200)
            let listed = try await http.request("GET", "/notes.json?ns=app&changes=true", headers: PastReadTests.admin).json()
            guard case .array(let changes) = listed else {
                Issue.record("expected a list")
                return
            }
            #expect(
                changes.map { $0["writer"] } == [.object([JSONMember("uid", .string("ada"))]), .object([JSONMember("admin", .bool(true))]), .null])
            #expect(changes.map { $0["kind"]?.stringValue } == ["set", "update", "remove"])
        }
    }
}
