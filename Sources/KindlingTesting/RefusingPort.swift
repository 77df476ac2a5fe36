#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback port that refuses connections for as long as this is held: a TCP socket bound to
/// it that does not listen. Tests of what a client does when nothing answers use it rather than
/// the port of a server they shut down, which another test's server, running in parallel, may
/// be given at once.
public final class RefusingPort: Sendable {
    public let port: Int
    private let descriptor: CInt

    /// Binds a new socket to a free port of 127.0.0.1; nil when the system gives none.
    public init?() {
        guard let descriptor = LoopbackSocket.open() else { return nil }
        var address = LoopbackSocket.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
