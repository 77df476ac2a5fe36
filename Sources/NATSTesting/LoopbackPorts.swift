import KindlingTesting
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Free loopback ports for test servers, so every test server gets its own and tests can run in
/// parallel. They are drawn from below the kernel's ephemeral range (32768 and up on Linux), where
/// the ports other tests' servers and clients get by binding port 0 come from: a port chosen
/// here and released cannot be taken by one of those before the NATS server binds it.
enum LoopbackPorts {
    /// The range drawn from, below the ephemeral one.
    static let range = 20_000..<32_000

    /// Ports already handed out in this process. A port given to a server that is killed for a
    /// failover test is free again while it is down, and drawing it for a second server would
    /// leave one of them without its port: no port is handed out twice.
    private static let handedOut = Mutex<Set<Int>>([])

    static func free() throws(NATSTestingError) -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: range)
            let taken = handedOut.withLock { ports in
                guard !ports.contains(port), isFree(port) else { return true }
                ports.insert(port)
                return false
            }
            if !taken { return port }
        }
        throw NATSTestingError("no free loopback port in \(range)")
    }

    /// True when `port` can be bound on 127.0.0.1 now.
    private static func isFree(_ port: Int) -> Bool {
        withSocket(port: port) { fd, address, length in bind(fd, address, length) == 0 } ?? false
    }

    /// Runs `body` with a new TCP socket and the address 127.0.0.1:`port`, closing the socket
    /// after; nil when no socket could be made.
    private static func withSocket<Result>(port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result? {
        guard let fd = LoopbackSocket.open() else { return nil }
        defer { close(fd) }
        var address = LoopbackSocket.address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// True when something accepts a TCP connection on loopback `port` now.
    static func accepts(port: Int) -> Bool {
        withSocket(port: port) { fd, address, length in connect(fd, address, length) == 0 } ?? false
    }

    /// Sends `GET path` to a loopback HTTP port and returns the status code, nil when nothing answers.
    static func httpStatus(port: Int, path: String) -> Int? {
        withSocket(port: port) { fd, address, length -> Int? in
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard connect(fd, address, length) == 0 else { return nil }
            return exchange(fd, path: path)
        } ?? nil
    }

    /// Sends the request on a connected socket and reads the status code of the answer.
    private static func exchange(_ fd: Int32, path: String) -> Int? {
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while response.count < 64 * 1024 {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += chunk[0..<count]
        }
        let statusLine = String(decoding: response.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2 else { return nil }
        return Int(parts[1])
    }
}
