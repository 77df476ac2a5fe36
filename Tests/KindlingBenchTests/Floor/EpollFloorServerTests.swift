#if os(Linux)
import Foundation
import Glibc
import KindlingBench
import NIOCore
import Testing

/// The epoll floor must answer as the SwiftNIO floor does (`FloorHandlerTests`), over real
/// sockets: the lean probe compares the two, so a difference in work would be a difference in
/// figures. Blocking sockets with a receive timeout: each read waits for the bytes themselves.
@Suite struct EpollFloorServerTests {
    /// A blocking loopback client of the floor.
    final class Client {
        let descriptor: CInt
        private var received: [UInt8] = []

        init(port: Int) throws {
            descriptor = socket(AF_INET, CInt(SOCK_STREAM.rawValue), 0)
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connected = try SocketAddress(ipAddress: "127.0.0.1", port: port).withSockAddr { connect(descriptor, $0, socklen_t($1)) }
            try #require(connected == 0)
        }

        deinit { close(descriptor) }

        func send(_ bytes: [UInt8]) throws {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
            try #require(sent == bytes.count)
        }

        /// Reads until `ending` has come; what came before it (ending included).
        func read(through ending: [UInt8]) throws -> [UInt8] {
            while true {
                if let end = received.firstRange(of: ending) {
                    defer { received.removeSubrange(..<end.upperBound) }
                    return Array(received[..<end.upperBound])
                }
                try receiveMore("the floor sent nothing more (errno \(errno))")
            }
        }

        /// The next `count` messages the floor sent.
        func messages(_ count: Int) throws -> [String] {
            var messages: [String] = []
            while messages.count < count {
                let bytes = received
                let parsed = FloorHandlerTests.messages(ByteBuffer(bytes: bytes))
                if parsed.count >= count, !parsed.contains("<short>") {
                    received = []
                    messages = parsed
                    break
                }
                try receiveMore("the floor sent \(parsed.count) of \(count) messages")
            }
            return messages
        }

        /// Waits for more bytes from the floor and adds them to `received`; `failure` says what
        /// was missing when none come (the socket's timeout, or its end).
        private func receiveMore(_ failure: @autoclosure () -> String) throws {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            try #require(count > 0, "\(failure())")
            received += chunk[..<count]
        }

        /// Connects and upgrades: the 101 answer, then the protocol's hello.
        static func connected(port: Int) throws -> Client {
            let client = try Client(port: port)
            try client.send(Array(FloorHandlerTests.handshake.utf8))
            let head = String(decoding: try client.read(through: Array("\r\n\r\n".utf8)), as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.1 101 "))
            #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
            #expect(try client.messages(1).first?.contains(#""t":"h""#) == true)
            return client
        }
    }

    static func ok(_ request: Int) -> String { #"{"t":"d","d":{"r":\#(request),"b":{"s":"ok","d":""}}}"# }

    /// Two listeners and a writer on the floor at `port`: every request answered with its
    /// number, once whole, and each put delivered to both listeners in order (the same check for
    /// every kind of floor, `FloorServerTests` too).
    static func answersEveryRequestAndDeliversPuts(port: Int) throws {
        let listeners = try (0..<2).map { _ in try Client.connected(port: port) }
        for listener in listeners {
            try listener.send(FloorHandlerTests.frame(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/f","h":""}}}"#))
            #expect(try listener.messages(1) == [Self.ok(1)])
        }
        let writer = try Client.connected(port: port)
        // Two puts in one send, and a long one in two: each answered once whole.
        let put = #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/f","d":{"ts":5}}}}"#
        let long = #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/f","d":"\#(String(repeating: "x", count: 300))"}}}"#
        let longFrame = FloorHandlerTests.frame(long)
        try writer.send(FloorHandlerTests.frame(put) + FloorHandlerTests.frame(put) + longFrame.prefix(40))
        #expect(try writer.messages(2) == [Self.ok(2), Self.ok(2)])
        try writer.send(Array(longFrame.dropFirst(40)))
        #expect(try writer.messages(1) == [Self.ok(3)])
        let event = #"{"t":"d","d":{"a":"d","b":{"p":"/f","d":{"ts":5}}}}"#
        let longEvent = #"{"t":"d","d":{"a":"d","b":{"p":"/f","d":"\#(String(repeating: "x", count: 300))"}}}"#
        for listener in listeners { #expect(try listener.messages(3) == [event, event, longEvent]) }
    }

    @Test func answersEveryRequestAndDeliversPutsToTheOtherListeners() async throws {
        let server = try EpollFloorServer(port: 0)
        // What serving ended with: nil once stopped, or the failure.
        let (ends, end) = AsyncStream<String?>.makeStream()
        Thread.detachNewThread {
            do throws(EpollFloorServer.Failure) {
                try server.serve()
                end.yield(nil)
            } catch {
                end.yield("\(error)")
            }
            end.finish()
        }
        var serving = true
        defer { if serving { server.stop() } }
        try Self.answersEveryRequestAndDeliversPuts(port: server.port)
        server.stop()
        serving = false
        var ended = ends.makeAsyncIterator()
        #expect(await ended.next() == .some(nil))
    }
}
#endif
