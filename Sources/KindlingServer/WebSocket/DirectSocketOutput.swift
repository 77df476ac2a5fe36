import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plaintext WebSocket's socket, written with `write(2)` from the event loop instead of
/// through SwiftNIO's channel (issue 40).
///
/// Why: for a message to one connection (an acknowledgement, one fan-out delivery) SwiftNIO's
/// outbound path (the pipeline's write and flush, the pending-writes queue, its promise
/// bookkeeping) was most of the server's user time per delivery. Profiled in release under `kindling-bench fanout --subscribers 1000 --writes 3000 --window 8`, a delivery
/// took 2,013 ns of server CPU, 562 of them in user space (the rest the kernel's); written
/// directly, 1,687 and 340 (BENCHMARKS.md, issue 40, round 4: 15–21% less CPU per
/// delivery in paired runs).
///
/// Only where writing the socket directly means the same bytes in the same order: the
/// connection has no TLS (a session checks its pipeline), and nothing it handed the pipeline
/// is still waiting there (the session counts those writes until they complete). What the
/// socket does not take at once, and anything after a failed call, goes to the pipeline, which
/// then waits for the socket to drain, or reports the error and closes the channel, as before.
///
/// SwiftNIO gives no public access to a channel's descriptor, so it is read by reflection from
/// the channel's socket, once per connection, and checked against the channel's own addresses;
/// a SwiftNIO whose fields differ only means every connection writes through the pipeline.
package struct DirectSocketOutput {
    package let descriptor: CInt

    /// The socket of `channel`, when it is a TCP socket channel whose descriptor can be found
    /// and whose local and peer addresses are the channel's.
    package init?(channel: any Channel) {
        guard let socket = Self.storedProperty("socket", of: channel),
            let descriptor = Self.storedProperty("descriptor", of: socket) as? CInt, descriptor >= 0,
            let local = channel.localAddress, let remote = channel.remoteAddress,
            Self.address(of: descriptor, peer: false) == local,
            Self.address(of: descriptor, peer: true) == remote
        else { return nil }
        self.descriptor = descriptor
    }

    /// What one call to `write` did.
    package enum Written: Equatable {
        /// The socket took every byte.
        case all
        /// The socket took some bytes or none (it is full, or the call failed): the rest,
        /// still in the buffer, goes to the pipeline.
        case rest
    }

    /// Sends the readable bytes of `bytes` to the socket until it takes no more, moving the
    /// buffer's reader index past what it took. Called on the channel's event loop, with the
    /// channel active: the loop is the only thread that closes the descriptor, so it is this
    /// channel's.
    package func write(_ bytes: inout ByteBuffer) -> Written {
        while bytes.readableBytes > 0 {
            let sent = bytes.withUnsafeReadableBytes { raw in
                systemWrite(descriptor, raw.baseAddress, raw.count)
            }
            if sent > 0 {
                bytes.moveReaderIndex(forwardBy: sent)
            } else if sent < 0, errno == EINTR {
                continue
            } else {
                // Full (EAGAIN), or an error the pipeline's own write meets again and reports.
                return .rest
            }
        }
        return .all
    }

    /// The stored property `label` of `subject`, looked up through its superclasses.
    private static func storedProperty(_ label: String, of subject: Any) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: subject)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == label }) { return child.value }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// The socket's own address (`getsockname`) or its peer's (`getpeername`).
    private static func address(of descriptor: CInt, peer: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                peer ? getpeername(descriptor, address, &length) : getsockname(descriptor, address, &length)
            }
        }
        guard result == 0 else { return nil }
        switch CInt(storage.ss_family) {
        case AF_INET:
            return SocketAddress(withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) })
        case AF_INET6:
            return SocketAddress(withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) })
        default:
            return nil
        }
    }
}

/// `write(2)`, as SwiftNIO writes a stream socket: the socket is non-blocking, SwiftNIO has
/// SIGPIPE ignored (for the process on Linux, per socket on Darwin), and /proc's `syscw` counts
/// these writes as it counts SwiftNIO's.
private func systemWrite(_ descriptor: CInt, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #else
    Darwin.write(descriptor, bytes, count)
    #endif
}
