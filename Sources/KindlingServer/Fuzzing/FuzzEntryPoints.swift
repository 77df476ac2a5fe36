import KindlingCore
import KindlingProtocol
import NIOCore
import NIOHTTP1

/// Whole-input entry points for fuzzing what a client controls: each takes arbitrary bytes, runs
/// them through the same parsers as the server (and the accepted results through a throwaway
/// namespace, so query windows, server values and priorities are exercised too) and returns
/// whether the input got past the parsers. Every refusal is a typed error caught here; a trap is
/// a bug the fuzzer reports.
///
/// Public so the `kindling-fuzz` driver (seeded mutation or libFuzzer) can reach parsers that are
/// internal to the server.
public enum FuzzEntryPoints {
    /// The JSON parser, then the tree built from what it accepted and written back out.
    @discardableResult
    public static func json(_ bytes: [UInt8]) -> Bool {
        guard let value = try? JSONParser.parse(bytes) else { return false }
        _ = JSONWriter.string(value)
        if let node = try? Node(json: value) { _ = node.hash }
        return true
    }

    /// The realtime decoder: the bytes are cut into frames at each 0x00 byte (so the count
    /// headers of split messages are reached), reassembled and decoded from their bytes as the
    /// session does (a frame that is not UTF-8 is dropped: the server closes on it); each request
    /// is then handled by a fresh namespace's state, as one connection's would be.
    @discardableResult
    public static func webSocket(_ bytes: [UInt8]) -> Bool {
        var assembler = FrameAssembler(maxMessageBytes: 64 * 1024, readsOversizedToTheEnd: true)
        var state = NamespaceState(name: "fuzz", root: seedRoot)
        let connection = ConnectionID(value: 1)
        state.connect(connection)
        var out: [Outgoing] = []
        var handled = false
        for frame in bytes.split(separator: 0, omittingEmptySubsequences: false) {
            // As the session reads a text frame: UTF-8 or the connection closes, then decoded
            // from the frame's own bytes unless it ends a split message.
            let piece = Array(frame)
            guard String(validating: piece, as: UTF8.self) != nil else { continue }
            let result: Result<ClientMessage?, ProtocolError> = piece.withUnsafeBufferPointer { buffer in
                Result { () throws(ProtocolError) -> ClientMessage? in
                    switch try assembler.receive(utf8: UnsafeRawBufferPointer(buffer)) {
                    case .nothing: return nil
                    case .thisFrame: return try ClientMessage.decode(utf8: buffer)
                    case .message(let message): return try ClientMessage.decode(message)
                    }
                }
            }
            guard case .success(let decoded?) = result else { continue }
            if case .request(let request) = decoded, let verifier, let input = SessionInput.from(request, verifier: verifier) {
                _ = state.handle(input, from: connection, now: 1_700_000_000_000, into: &out)
                handled = true
            }
        }
        _ = state.disconnect(connection, now: 1_700_000_000_001, into: &out)
        return handled
    }

    /// The REST request parser: the first line is `METHOD URI`, the lines up to an empty line
    /// are headers (`name: value`), the rest is the body. An accepted request is read from, or
    /// written to, a fresh namespace's state.
    @discardableResult
    public static func rest(_ bytes: [UInt8]) -> Bool {
        var lines = bytes.split(separator: 10, maxSplits: 64, omittingEmptySubsequences: false)[...]
        guard let first = lines.popFirst() else { return false }
        let requestLine = String(decoding: first, as: UTF8.self).split(separator: " ", maxSplits: 1)
        guard requestLine.count == 2 else { return false }
        var headers = HTTPHeaders()
        var body: [UInt8] = []
        while let line = lines.popFirst() {
            if line.isEmpty {
                body = lines.joined(separator: [10]).map { $0 }
                break
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let colon = text.firstIndex(of: ":") else { continue }
            // NIO's HTTP parser only ever hands over token names and values without line breaks.
            let name = text[..<colon]
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) else { continue }
            headers.add(name: String(name), value: text[text.index(after: colon)...].trimmingSpaces)
        }
        let head = HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: String(requestLine[0])), uri: String(requestLine[1]), headers: headers)
        let isAdminSDK = headers.first(name: "user-agent")?.hasPrefix("Firebase/HTTP/") == true
        let target = RequestTarget(uri: head.uri, plusIsSpace: !isAdminSDK)
        let request: RESTRequest
        let auth: AuthState
        do throws(RESTError) {
            request = try RESTRequest(head: head, target: target, defaultNamespace: "kindling")
            guard let verifier else { return false }
            auth = try request.identity(verifier: verifier, now: 1_700_000_000_000)
        } catch {
            return false
        }
        guard request.endpoint == nil else { return false }
        let operation: Operation
        if request.method == .get {
            operation = .get(path: request.path, query: request.query)
        } else {
            do throws(RESTError) {
                operation = try RESTBody.operation(request.method, body: ByteBuffer(bytes: body)).operation(
                    at: request.path, ifMatch: request.ifMatch)
            } catch {
                return false
            }
        }
        var state = NamespaceState(name: "fuzz", root: seedRoot)
        var out: [Outgoing] = []
        switch state.apply(operation, by: .rest(auth), now: 1_700_000_000_000, into: &out) {
        case .data(let node): _ = RESTRendering.data(node, shallow: request.shallow, format: request.format, print: request.print)
        case .written(let result, _): _ = RESTRendering.result(result, format: request.format, print: request.print)
        default: break
        }
        return true
    }

    /// The server's verifier with default settings (emulator mode, as `kindling serve` runs).
    static let verifier = try? CredentialVerifier(settings: .unconfigured(onLoopback: true))

    /// A small tree with numbers, strings, priorities and nesting, so reads, queries and
    /// increments have something to work on.
    static let seedRoot: Node = {
        let json = JSONValue.object([
            JSONMember(
                "s",
                .object([
                    JSONMember("a", .number(1)), JSONMember("b", .number(2)), JSONMember("c", .string("x")),
                    JSONMember("d", .object([JSONMember(".value", .number(4)), JSONMember(".priority", .number(1))])),
                    JSONMember("e", .object([JSONMember("h", .number(9)), JSONMember("t", .bool(true))])),
                ])),
            JSONMember("n", .number(9_007_199_254_740_991)),
            JSONMember("list", .array([.number(0), .string("one"), .null, .number(3)])),
        ])
        return (try? Node(json: json)) ?? .empty
    }()
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
