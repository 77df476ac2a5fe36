import ArgumentParser
import Foundation
import KindlingBench
import NIOCore
import NIOPosix

/// `kindling-bench floor`: serves `FloorServer`, the least any SwiftNIO WebSocket server does per
/// request, with `--io nio-direct` the same writing its sockets itself as Kindling's sessions do,
/// or with `--io epoll` the same answers on a bare epoll loop (`EpollFloorServer`), for the lean
/// probe to measure beside `kindling serve` and Redis.
struct FloorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "floor",
        abstract: "Serve a bare WebSocket answerer (no database, no log) for the lean probe: the floor under Kindling's per-request cost."
    )

    /// What reads and writes the floor's sockets.
    enum IO: String, ExpressibleByArgument, CaseIterable {
        /// SwiftNIO's channels, on one event loop, as `kindling serve` has on two cores.
        case nio
        /// SwiftNIO's channels for reads, and `write(2)` from the event loop for writes, as
        /// Kindling's plaintext sessions have (its I/O path without its database).
        case nioDirect = "nio-direct"
        /// As `nio-direct`, and reads too with `read(2)` from the event loop, told which sockets
        /// are ready by a thread of its own (Linux).
        case nioWatched = "nio-watched"
        /// One thread on a bare epoll loop (Linux), as Redis serves.
        case epoll
    }

    @Option(help: "The port to listen on (127.0.0.1).")
    var port = 9000

    @Option(
        help:
            "What serves the sockets: nio (SwiftNIO's channels), nio-direct (SwiftNIO's channels for reads, write(2) for writes, as Kindling's sessions) or epoll (a bare epoll loop; Linux only)."
    )
    var io = IO.nio

    func validate() throws {
        guard (1...65_535).contains(port) else { throw ValidationError("--port must be 1…65535.") }
        #if !os(Linux)
        if io == .epoll || io == .nioWatched { throw ValidationError("--io \(io.rawValue) needs Linux.") }
        #endif
    }

    func run() async throws {
        switch io {
        case .nio, .nioDirect, .nioWatched:
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let channel = try await FloorServer.bind(port: port, group: group, directWrites: io != .nio, watchedReads: io == .nioWatched)
            announce()
            try await channel.closeFuture.get()
        case .epoll:
            #if os(Linux)
            let server = try EpollFloorServer(port: port)
            announce()
            // Its own thread: the loop blocks in epoll_wait.
            try await withCheckedThrowingContinuation { (ended: CheckedContinuation<Void, any Error>) in
                Thread.detachNewThread {
                    do throws(EpollFloorServer.Failure) {
                        try server.serve()
                        ended.resume()
                    } catch {
                        ended.resume(throwing: error)
                    }
                }
            }
            #else
            break  // refused by `validate()`
            #endif
        }
    }

    /// Unbuffered, so a script waiting for the line sees it at once.
    private func announce() {
        FileHandle.standardOutput.write(Data("floor listening on 127.0.0.1:\(port)\n".utf8))
    }
}
