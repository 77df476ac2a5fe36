import Foundation
import NIOCore
import NIOPosix

/// What a NATS server's monitoring endpoint (`/varz` on its `http_port`) says about its
/// durability: the client protocol shows a server's version (INFO) but not its JetStream
/// settings, so `--require-fsync` asks here. A hand-written HTTP/1.0 GET: one request to a
/// server the operator named, no client library in this target covers it, and the answer is
/// read to the connection's end.
struct NATSMonitor: Sendable {
    /// The parts of `/varz` the check reads.
    struct Varz: Decodable, Sendable {
        var version: String
        var jetstream: JetStream?

        struct JetStream: Decodable, Sendable {
            var config: Config?
        }

        struct Config: Decodable, Sendable {
            /// Absent (false) unless the server runs with `sync_interval: always`.
            var syncAlways: Bool?

            enum CodingKeys: String, CodingKey {
                case syncAlways = "sync_always"
            }
        }

        /// True when the server fsyncs each write before acknowledging it.
        var syncsAlways: Bool { jetstream?.config?.syncAlways ?? false }
    }

    var host: String
    var port: Int

    /// Why `/varz` could not be read.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads `/varz`; throws `Failure` when it cannot.
    func varz(timeout: Duration = .seconds(5)) async throws(Failure) -> Varz {
        let bytes: [UInt8]
        do {
            bytes = try await get("/varz", timeout: timeout)
        } catch {
            throw Failure(description: "cannot read http://\(host):\(port)/varz (the NATS server's monitoring port): \(error)")
        }
        guard let split = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw Failure(description: "http://\(host):\(port)/varz answered no HTTP response")
        }
        let status = String(decoding: bytes[..<split.lowerBound], as: UTF8.self).split(separator: " ").dropFirst().first
        guard status == "200" else { throw Failure(description: "http://\(host):\(port)/varz answered \(status.map(String.init) ?? "nothing")") }
        do {
            return try JSONDecoder().decode(Varz.self, from: Data(bytes[split.upperBound...]))
        } catch {
            throw Failure(description: "http://\(host):\(port)/varz is not the NATS monitoring answer expected: \(error)")
        }
    }

    private func get(_ path: String, timeout: Duration) async throws -> [UInt8] {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let done = loop.makePromise(of: [UInt8].self)
        let limit = TimeAmount.milliseconds(Int64(timeout.components.seconds) * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(limit)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(done: done)) }
                }
                .connect(host: host, port: port).get()
        } catch {
            done.fail(error)
            throw error
        }
        // The answer is what came when the connection closed, by the server or at the limit.
        let timer = loop.scheduleTask(in: limit) { channel.close(promise: nil) }
        defer { timer.cancel() }
        try await channel.writeAndFlush(ByteBuffer(string: "GET \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n"))
        return try await done.futureResult.get()
    }

    /// Gathers what the server sends until it closes the connection.
    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let done: EventLoopPromise<[UInt8]>
        private var bytes: [UInt8] = []

        init(done: EventLoopPromise<[UInt8]>) {
            self.done = done
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
        }

        func channelInactive(context: ChannelHandlerContext) {
            done.succeed(bytes)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
