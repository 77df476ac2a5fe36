import KindlingCore
import KindlingWebSocketClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A small HTTP/1.1 client over one real, kept-alive connection, for integration tests of the
/// REST API: plain requests and responses, and event streams read event by event.
public final class TestHTTPConnection: Sendable {
    private let channel: any Channel
    private let parts: AsyncQueue<ResponsePart>
    private let host: String
    private let pendingEventBytes = Mutex<[UInt8]>([])

    private init(channel: any Channel, parts: AsyncQueue<ResponsePart>, host: String) {
        self.channel = channel
        self.parts = parts
        self.host = host
    }

    /// Connects; with `tls`, over `https://` (the server's certificate checked against `host`).
    public static func connect(
        port: Int,
        host: String = "127.0.0.1",
        tls: TLSConfiguration? = nil,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> TestHTTPConnection {
        try await open(port: port, host: host, tls: tls, group: group, first: nil)
    }

    /// One request and its whole response, on a fresh connection that is closed afterwards.
    /// The request is written as soon as the connection is up, on its event loop: a loaded
    /// machine that leaves the calling task waiting cannot make it outlast the server's header
    /// timeout first.
    public static func request(
        port: Int,
        _ method: String,
        _ uri: String,
        headers: [(String, String)] = [],
        body: String? = nil,
        tls: TLSConfiguration? = nil,
        timeout: Duration = .seconds(10)
    ) async throws -> TestHTTPResponse {
        let request = Request(method: method, uri: uri, headers: headers, body: body)
        let connection = try await open(port: port, host: "127.0.0.1", tls: tls, group: MultiThreadedEventLoopGroup.singleton, first: request)
        defer { connection.close() }
        return try await connection.response(timeout: timeout)
    }

    private static func open(
        port: Int, host: String, tls: TLSConfiguration?, group: any EventLoopGroup, first: Request?
    ) async throws -> TestHTTPConnection {
        let parts = AsyncQueue<ResponsePart>()
        let tlsContext = try tls.map { try NIOSSLContext(configuration: $0) }
        let authority = "\(host):\(port)"
        let channel = try await ClientBootstrap(group: group)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tlsContext {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tlsContext, serverHostname: WebSocketClient.serverName(host)))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(PartReceiver(parts: parts))
                }
            }
            .connect(host: host, port: port)
            .flatMap { channel in
                guard let first else { return channel.eventLoop.makeSucceededFuture(channel) }
                // A request that cannot be written leaves no connection open behind its error.
                return write(first, host: authority, to: channel).map { channel }.flatMapError { error in
                    channel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .get()
        return TestHTTPConnection(channel: channel, parts: parts, host: authority)
    }

    /// Sends a request and waits for its whole response.
    public func request(
        _ method: String,
        _ uri: String,
        headers: [(String, String)] = [],
        body: String? = nil,
        timeout: Duration = .seconds(10)
    ) async throws -> TestHTTPResponse {
        try await send(method, uri, headers: headers, body: body)
        return try await response(timeout: timeout)
    }

    /// Sends a request without waiting for the answer. A body gets a `Content-Length` unless
    /// the caller gave one.
    public func send(_ method: String, _ uri: String, headers: [(String, String)] = [], body: String? = nil) async throws {
        try await Self.write(Request(method: method, uri: uri, headers: headers, body: body), host: host, to: channel).get()
    }

    /// The whole next response.
    private func response(timeout: Duration) async throws -> TestHTTPResponse {
        var response = try await responseHead(timeout: timeout)
        while true {
            guard let part = await parts.next(timeout: timeout) else { throw TestClientError.timedOut }
            switch part {
            case .head: continue
            case .body(var buffer): response.body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
            case .end: return response
            }
        }
    }

    /// A request as the caller wrote it.
    private struct Request: Sendable {
        var method: String
        var uri: String
        var headers: [(String, String)]
        var body: String?
    }

    private static func write(_ request: Request, host: String, to channel: any Channel) -> EventLoopFuture<Void> {
        var fields = HTTPHeaders()
        for (name, value) in request.headers { fields.add(name: name, value: value) }
        if !fields.contains(name: "host") { fields.add(name: "Host", value: host) }
        if let body = request.body, !fields.contains(name: "content-length") {
            fields.add(name: "Content-Length", value: String(body.utf8.count))
        }
        if request.body == nil, request.method != "GET", !fields.contains(name: "content-length") {
            fields.add(name: "Content-Length", value: "0")
        }
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.uri, headers: fields)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body = request.body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(string: body))), promise: nil) }
        return channel.writeAndFlush(HTTPClientRequestPart.end(nil))
    }

    /// Waits for the status and headers of the next response (the body is read separately).
    public func responseHead(timeout: Duration = .seconds(10)) async throws -> TestHTTPResponse {
        guard let part = await parts.next(timeout: timeout) else { throw TestClientError.timedOut }
        guard case .head(let head) = part else { throw TestHTTPError.unexpectedPart }
        return TestHTTPResponse(status: Int(head.status.code), headers: head.headers.map { ($0.name, $0.value) }, body: [])
    }

    /// The next server-sent event of a stream whose head was read. Throws when none arrives in
    /// time or the stream ended.
    public func nextEvent(timeout: Duration = .seconds(10)) async throws -> TestServerSentEvent {
        let terminator: [UInt8] = [10, 10]
        while true {
            let complete: [UInt8]? = pendingEventBytes.withLock { pending in
                guard let range = pending.firstRange(of: terminator) else { return nil }
                defer { pending.removeSubrange(..<range.upperBound) }
                return Array(pending[..<range.lowerBound])
            }
            if let complete { return TestServerSentEvent(block: String(decoding: complete, as: UTF8.self)) }
            guard let part = await parts.next(timeout: timeout) else { throw TestClientError.timedOut }
            switch part {
            case .body(var buffer):
                let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
                pendingEventBytes.withLock { $0.append(contentsOf: bytes) }
            case .end: throw TestHTTPError.streamEnded
            case .head: throw TestHTTPError.unexpectedPart
            }
        }
    }

    /// True once the server closed the connection (within `timeout`).
    public func waitForClose(timeout: Duration = .seconds(10)) async -> Bool {
        (try? await eventually(within: timeout, every: .milliseconds(10)) { !channel.isActive }) ?? false
    }

    /// The serial number (hex) of the certificate the server presented; nil without TLS.
    public func peerCertificateSerial() async throws -> String? {
        guard let certificate = try await channel.nioSSL_peerCertificate().get() else { return nil }
        return certificate.serialNumber.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    public func close() {
        channel.close(promise: nil)
    }
}

/// A complete response.
public struct TestHTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    /// The first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    public func json() throws -> JSONValue { try JSONParser.parse(body) }
}

/// One server-sent event block, with its raw text kept for checks on framing.
public struct TestServerSentEvent: Sendable, Equatable {
    public var raw: String
    public var event: String?
    public var data: String?

    init(block: String) {
        raw = block
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
        }
    }
}

public enum TestHTTPError: Error {
    case unexpectedPart
    case streamEnded
}

/// One piece of a response as NIO decoded it.
private enum ResponsePart: Sendable {
    case head(HTTPResponseHead)
    case body(ByteBuffer)
    case end
}

/// Hands response parts to the connection's queue.
private final class PartReceiver: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    let parts: AsyncQueue<ResponsePart>

    init(parts: AsyncQueue<ResponsePart>) { self.parts = parts }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): parts.push(.head(head))
        case .body(let buffer): parts.push(.body(buffer))
        case .end: parts.push(.end)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        parts.finish()
        context.fireChannelInactive()
    }
}
