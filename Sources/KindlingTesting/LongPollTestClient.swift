import Foundation
import KindlingCore
import Synchronization

/// A realtime client over long-polling (`/.lp`), speaking it as the JS SDK's
/// `BrowserPollConnection` does: a `start`, then one poll held open at a time, each answered
/// with scripts whose packets it reorders by number; messages sent as web-safe base64 cut into
/// numbered segments, each request on a connection of its own as a browser's script tags are.
public final class LongPollTestClient: Sendable {
    public let port: Int
    public let namespace: String
    public let id: String
    public let password: String
    /// The first message, the handshake.
    public let handshake: JSONValue
    /// Headers a browser would send with a script request (the page it comes from).
    public let headers: [(String, String)]
    static let callback = "5"

    private struct State {
        var nextPacket = 1
        var packets: [Int: [JSONValue]] = [:]
        var nextSegment = 0
        var closeAfter: Int?
        var closed = false
    }

    private let state = Mutex(State())
    private let messages = AsyncQueue<JSONValue>()
    /// Pushed once when the server closes the session.
    private let closedSignal = AsyncQueue<Bool>()
    private let polling = Mutex<Task<Void, Never>?>(nil)

    private init(port: Int, namespace: String, id: String, password: String, handshake: JSONValue, headers: [(String, String)]) {
        self.port = port
        self.namespace = namespace
        self.id = id
        self.password = password
        self.handshake = handshake
        self.headers = headers
    }

    /// The answer to a `start` request, as the server sent it.
    public static func startResponse(
        port: Int, namespace: String = "test", lastSession: String? = nil, headers: [(String, String)] = [("Sec-Fetch-Site", "same-origin")]
    ) async throws -> TestHTTPResponse {
        let uri = "/.lp?start=t&ser=1&cb=\(callback)&v=5&ns=\(namespace)" + (lastSession.map { "&ls=\($0)" } ?? "")
        return try await TestHTTPConnection.request(port: port, "GET", uri, headers: headers)
    }

    /// Starts a session and keeps a poll open until `close`.
    public static func start(
        port: Int, namespace: String = "test", lastSession: String? = nil, headers: [(String, String)] = [("Sec-Fetch-Site", "same-origin")]
    ) async throws -> LongPollTestClient {
        let response = try await startResponse(port: port, namespace: namespace, lastSession: lastSession, headers: headers)
        let statements = Self.statements(response.text)
        guard response.status == 200, let start = statements.first, start.name == "pLPCommand", start.arguments.count == 3,
            start.arguments[0].stringValue == "start", let id = start.arguments[1].stringValue, let password = start.arguments[2].stringValue,
            statements.count == 2, statements[1].name == "pRTLPCB", statements[1].arguments.first?.numberValue == 0,
            case .array(let first)? = statements[1].arguments.last, let handshake = first.first
        else { throw TestClientError.unexpected("start answered \(response.status): \(response.text)") }
        let client = LongPollTestClient(port: port, namespace: namespace, id: id, password: password, handshake: handshake, headers: headers)
        client.polling.withLock { $0 = Task { await client.poll() } }
        return client
    }

    /// The session id the handshake gave (what a WebSocket taking it over names with `s=`).
    public var session: String { handshake["d"]?["d"]?["s"]?.stringValue ?? "" }

    /// Sends one message (a JSON text), in as many segments as the SDK would cut it into.
    public func send(_ message: String) async throws {
        let encoded = Self.base64(Array(message.utf8))
        let pieces = stride(from: 0, to: encoded.count, by: 1_840).map { String(encoded.dropFirst($0).prefix(1_840)) }
        let first = state.withLock { state in
            defer { state.nextSegment += pieces.count }
            return state.nextSegment
        }
        // One segment per request, so a long message takes several requests, as from the SDK.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, piece) in pieces.enumerated() {
                group.addTask { try await self.request("&seg0=\(first + index)&ts0=\(pieces.count)&d0=\(piece)") }
            }
            try await group.waitForAll()
        }
    }

    /// Sends a request (`{"t":"d","d":{"r":N,"a":action,"b":body}}`) with the next number.
    public func send(request number: Int, _ action: String, _ body: String) async throws {
        try await send(#"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":\#(body)}}"#)
    }

    /// The next message from the server, in the order it sent them.
    public func nextMessage(timeout: Duration = .seconds(10)) async throws -> JSONValue {
        guard let message = await messages.next(timeout: timeout) else { throw TestClientError.timedOut }
        return message
    }

    /// Whether the server closed the session (`close` command) within `timeout`.
    public func waitForClose(timeout: Duration = .seconds(10)) async -> Bool {
        if state.withLock({ $0.closed }) { return true }
        return await closedSignal.next(timeout: timeout) != nil
    }

    /// Stops polling, as a page that unloads does (the server notices after its timeout, or at
    /// once when a disconnect frame closes).
    public func stop() {
        state.withLock { $0.closed = true }
        polling.withLock { $0?.cancel() }
    }

    private func poll() async {
        while !Task.isCancelled, !state.withLock({ $0.closed }) {
            do {
                try await request("")
            } catch {
                // As the SDK does when a script fails to load: the connection is over.
                let closes = state.withLock { state in
                    defer { state.closed = true }
                    return !state.closed
                }
                if closes { closedSignal.push(true) }
                if !Task.isCancelled { messages.finish() }
                return
            }
        }
    }

    private func request(_ segments: String) async throws {
        let serial = Int.random(in: 0..<100_000_000)
        let uri = "/.lp?id=\(id)&pw=\(password)&ser=\(serial)&ns=\(namespace)\(segments)"
        let response = try await TestHTTPConnection.request(port: port, "GET", uri, headers: headers, timeout: .seconds(30))
        guard response.status == 200 else { throw TestClientError.unexpected("poll answered \(response.status): \(response.text)") }
        take(response.text)
    }

    private func take(_ script: String) {
        var ready: [JSONValue] = []
        let closes = state.withLock { state in
            for statement in Self.statements(script) {
                if statement.name == "pRTLPCB", let number = statement.arguments.first?.numberValue,
                    case .array(let batch)? = statement.arguments.last
                {
                    state.packets[Int(number)] = batch
                } else if statement.name == "pLPCommand", statement.arguments.first?.stringValue == "close" {
                    state.closeAfter = statement.arguments.count > 1 ? statement.arguments[1].numberValue.map(Int.init) ?? -1 : -1
                }
            }
            while let batch = state.packets.removeValue(forKey: state.nextPacket) {
                ready += batch
                state.nextPacket += 1
            }
            guard let last = state.closeAfter, last < state.nextPacket, !state.closed else { return false }
            state.closed = true
            return true
        }
        for message in ready { messages.push(message) }
        if closes { closedSignal.push(true) }
    }

    /// The calls a script makes: `parent.NAME<cb>(arguments);`, the arguments read as a JSON array.
    static func statements(_ script: String) -> [(name: String, arguments: [JSONValue])] {
        script.components(separatedBy: ";parent.").compactMap { part in
            var text = part.hasPrefix("parent.") ? String(part.dropFirst("parent.".count)) : part
            if text.hasSuffix(";") { text.removeLast() }
            guard let open = text.firstIndex(of: "("), text.hasSuffix(")") else { return nil }
            let name = String(text[..<open]).replacingOccurrences(of: callback, with: "")
            let arguments = "[" + text[text.index(after: open)..<text.index(before: text.endIndex)] + "]"
            guard case .array(let values)? = try? JSONParser.parse(arguments) else { return nil }
            return (name, values)
        }
    }

    /// Web-safe base64 with `.` padding, as the SDK's `base64Encode`.
    static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=", with: ".")
    }
}
