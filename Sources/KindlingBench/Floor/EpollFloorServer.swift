#if os(Linux)
import CEpoll
import Glibc
import NIOCore

/// The floor without SwiftNIO (issue 40): `FloorServer`'s answers (`FloorWire`), read and written
/// by one thread on a bare level-triggered epoll loop, the way Redis serves its clients. Each
/// turn reads every ready socket once into one scratch buffer, answers and fans out what it
/// read, then writes each connection that has output once.
///
/// Why: SwiftNIO's floor costs more CPU per request than Redis at 256 connections with one write
/// in flight each (issue 40's round 6: 3,792 ns of user time against Redis's 2,198, with no
/// database behind it), which bounds every server built on its channels. This floor measures
/// what an I/O path of Kindling's own could reach in that regime, before such a path is built.
/// Written by hand: no kept library offers an epoll loop without a channel pipeline. Like the
/// other floor it trusts its client and is for benchmarks only.
public struct EpollFloorServer: Sendable {
    /// A system call the floor cannot go on without failed.
    public struct Failure: Error, CustomStringConvertible {
        public let call: String
        public let code: CInt

        public var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    private let listener: CInt
    /// An eventfd in the loop's set: `stop()` writes it.
    private let wake: CInt
    /// The port it listens on.
    public let port: Int

    /// Listens on 127.0.0.1:`port` (0: a free one, then in `port`).
    public init(port: Int) throws(Failure) {
        let descriptor = socket(AF_INET, CInt(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(call: "socket", code: errno) }
        var one: CInt = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size))
        // SwiftNIO's address type makes the sockaddr (bind), and the port bound is read from
        // sockaddr_in's bytes (getsockname): sin_port, in network order, at offset 2.
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let bound =
            (try? SocketAddress(ipAddress: "127.0.0.1", port: port).withSockAddr { address, size in
                bind(descriptor, address, socklen_t(size)) == 0 && listen(descriptor, 4096) == 0
            }) == true
            && withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 }
            }
        let wake = eventfd(0, CInt(EFD_CLOEXEC | EFD_NONBLOCK))
        guard bound, wake >= 0 else {
            let failure = Failure(call: bound ? "eventfd" : "bind", code: errno)
            close(descriptor)
            throw failure
        }
        listener = descriptor
        self.wake = wake
        self.port = withUnsafeBytes(of: storage) { Int($0[2]) << 8 | Int($0[3]) }
    }

    /// Serves on the calling thread until `stop()`, or until a call the loop needs fails; then
    /// closes every socket. A server serves once.
    public func serve() throws(Failure) {
        let poll = epoll_create1(CInt(EPOLL_CLOEXEC))
        guard poll >= 0 else { throw Failure(call: "epoll_create1", code: errno) }
        var loop = EpollFloorLoop(poll: poll)
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: 1024)
        defer {
            events.deallocate()
            loop.closeAll()
            for descriptor in [poll, listener, wake] { close(descriptor) }
        }
        try Self.control(poll, EPOLL_CTL_ADD, listener, EPOLLIN.rawValue)
        try Self.control(poll, EPOLL_CTL_ADD, wake, EPOLLIN.rawValue)
        while true {
            let count = epoll_wait(poll, events, 1024, -1)
            guard count >= 0 else {
                if errno == EINTR { continue }
                throw Failure(call: "epoll_wait", code: errno)
            }
            for index in 0..<Int(count) {
                let descriptor = events[index].data.fd
                if descriptor == wake { return }
                if descriptor == listener {
                    try loop.accept(from: listener)
                } else {
                    try loop.ready(descriptor, events: events[index].events)
                }
            }
            try loop.flush()
        }
    }

    /// Ends `serve()`, from any thread.
    public func stop() {
        _ = eventfd_write(wake, 1)
    }

    /// Sets what `poll` watches `descriptor` for.
    static func control(_ poll: CInt, _ operation: CInt, _ descriptor: CInt, _ events: UInt32) throws(Failure) {
        var event = epoll_event()
        event.events = events
        event.data.fd = descriptor
        guard epoll_ctl(poll, operation, descriptor, &event) == 0 else { throw Failure(call: "epoll_ctl", code: errno) }
    }
}

/// One connection of the epoll floor: what it has read of a frame not yet whole, and what waits
/// to be written to it.
private final class EpollFloorConnection {
    let descriptor: CInt
    var received = ByteBuffer()
    var upgraded = false
    var output = ByteBuffer()
    /// Whether it is in this turn's list of connections to write.
    var isDirty = false
    /// Whether the socket was full, so the loop also waits for it to take more.
    var waitsForRoom = false
    var isOpen = true

    init(descriptor: CInt) { self.descriptor = descriptor }
}

/// The epoll floor's state: its connections, those that listen, and those to write this turn.
/// Lives on the one thread that serves.
private struct EpollFloorLoop {
    let poll: CInt
    var connections: [CInt: EpollFloorConnection] = [:]
    var listeners: [EpollFloorConnection] = []
    var dirty: [EpollFloorConnection] = []
    /// Where every read lands first; only the start of a frame not yet whole is kept.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)

    init(poll: CInt) { self.poll = poll }

    /// Accepts every connection waiting.
    mutating func accept(from listener: CInt) throws(EpollFloorServer.Failure) {
        while true {
            // accept and two fcntl calls (Swift's Glibc module has no accept4): once per
            // connection, outside any measured window.
            let descriptor = Glibc.accept(listener, nil, nil)
            guard descriptor >= 0 else {
                if errno == EINTR { continue }
                return  // none left (EAGAIN), or none can be taken now: the next turn tries again
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            var one: CInt = 1
            setsockopt(descriptor, CInt(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<CInt>.size))
            try EpollFloorServer.control(poll, EPOLL_CTL_ADD, descriptor, EPOLLIN.rawValue)
            connections[descriptor] = EpollFloorConnection(descriptor: descriptor)
        }
    }

    /// Reads, or writes, the connection `events` says is ready.
    mutating func ready(_ descriptor: CInt, events: UInt32) throws(EpollFloorServer.Failure) {
        guard let connection = connections[descriptor] else { return }
        if events & EPOLLOUT.rawValue != 0 { try write(connection) }
        guard connection.isOpen, events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 else { return }
        let count = Glibc.read(descriptor, scratch.baseAddress, scratch.count)
        guard count > 0 else {
            if count < 0, errno == EAGAIN || errno == EINTR { return }
            close(connection)
            return
        }
        take(UnsafeRawBufferPointer(rebasing: scratch[0..<count]), from: connection)
    }

    /// Writes every connection that has output, once.
    mutating func flush() throws(EpollFloorServer.Failure) {
        for connection in dirty where connection.isOpen {
            connection.isDirty = false
            try write(connection)
        }
        dirty.removeAll(keepingCapacity: true)
    }

    /// Handles `bytes`, just read from `connection`: the handshake, then every whole frame.
    private mutating func take(_ bytes: UnsafeRawBufferPointer, from connection: EpollFloorConnection) {
        if connection.upgraded, connection.received.readableBytes == 0 {
            let used = takeFrames(bytes, from: connection)
            if used < bytes.count { connection.received.writeBytes(UnsafeRawBufferPointer(rebasing: bytes[used...])) }
            return
        }
        connection.received.writeBytes(bytes)
        if !connection.upgraded {
            guard let reply = FloorWire.handshake(&connection.received) else { return }
            connection.upgraded = true
            queue(reply, to: connection)
        }
        let used = connection.received.withUnsafeReadableBytes { takeFrames($0, from: connection) }
        connection.received.moveReaderIndex(forwardBy: used)
        if connection.received.readableBytes == 0 { connection.received.clear() }
    }

    /// Answers every whole frame at the start of `bytes`; how many bytes they took.
    private mutating func takeFrames(_ bytes: UnsafeRawBufferPointer, from connection: EpollFloorConnection) -> Int {
        FloorWire.frames(in: bytes) { answer($0, from: connection) }
    }

    /// Answers one request and, for a put, queues its event to every other listener.
    private mutating func answer(_ payload: UnsafeRawBufferPointer, from connection: EpollFloorConnection) {
        switch FloorWire.answer(payload, into: &connection.output) {
        case .other:
            break
        case .listen:
            listeners.append(connection)
        case .put(let event):
            for listener in listeners where listener !== connection { queue(event, to: listener) }
        }
        markDirty(connection)
    }

    /// Adds `frame` to what `connection` will be written; the first one waiting is kept as it
    /// is (its storage shared with every other listener's).
    private mutating func queue(_ frame: ByteBuffer, to connection: EpollFloorConnection) {
        if connection.output.readableBytes == 0 {
            connection.output = frame
        } else {
            connection.output.writeImmutableBuffer(frame)
        }
        markDirty(connection)
    }

    private mutating func markDirty(_ connection: EpollFloorConnection) {
        guard !connection.isDirty else { return }
        connection.isDirty = true
        dirty.append(connection)
    }

    /// Writes what the socket takes of `connection`'s output, and watches for room while some
    /// is left.
    private mutating func write(_ connection: EpollFloorConnection) throws(EpollFloorServer.Failure) {
        while connection.output.readableBytes > 0 {
            let sent = connection.output.withUnsafeReadableBytes { Glibc.write(connection.descriptor, $0.baseAddress, $0.count) }
            if sent > 0 {
                connection.output.moveReaderIndex(forwardBy: sent)
            } else if sent < 0, errno == EINTR {
                continue
            } else if sent < 0, errno == EAGAIN {
                break
            } else {
                close(connection)
                return
            }
        }
        let waits = connection.output.readableBytes > 0
        if waits != connection.waitsForRoom {
            connection.waitsForRoom = waits
            try EpollFloorServer.control(poll, EPOLL_CTL_MOD, connection.descriptor, EPOLLIN.rawValue | (waits ? EPOLLOUT.rawValue : 0))
        }
        if !waits { connection.output.clear() }
    }

    /// Closes every connection (the loop ends).
    mutating func closeAll() {
        for connection in Array(connections.values) { close(connection) }
        scratch.deallocate()
    }

    private mutating func close(_ connection: EpollFloorConnection) {
        connection.isOpen = false
        connections[connection.descriptor] = nil
        listeners.removeAll { $0 === connection }
        // Closing the descriptor also takes it out of the epoll set.
        _ = Glibc.close(connection.descriptor)
    }
}
#endif
