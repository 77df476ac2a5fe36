#if os(Linux)
import KindlingBench
import NIOCore
import NIOPosix
import Testing

/// The SwiftNIO floor over real sockets, writing through its channel or, as `kindling-bench floor
/// --io nio-direct`, to each socket itself, and as `--io nio-watched` reading it itself too: the
/// same answers and deliveries as the epoll floor every way, so the lean probe's floors differ
/// only in how they do the I/O.
@Suite struct FloorServerTests {
    @Test(arguments: [(false, false), (true, false), (true, true)])
    func answersEveryRequestAndDeliversPutsToTheOtherListeners(directWrites: Bool, watchedReads: Bool) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let hub = FloorHub()
        let channel = try await FloorServer.bind(port: 0, group: group, directWrites: directWrites, watchedReads: watchedReads, hub: hub)
        let checked = Result { () throws -> Void in
            let port = try #require(channel.localAddress?.port)
            try EpollFloorServerTests.answersEveryRequestAndDeliversPuts(port: port)
        }
        // Every connection (two listeners and a writer) wrote its socket itself, or none did.
        let (direct, watched) = try await channel.eventLoop.submit { (hub.directSockets, hub.watchedSockets) }.get()
        #expect(direct == (directWrites ? 3 : 0))
        #expect(watched == (watchedReads ? 3 : 0))
        try await channel.close()
        try await group.shutdownGracefully()
        try checked.get()
    }
}
#endif
