#if os(Linux)
import KindlingBench
import NIOCore
import NIOPosix
import Testing

/// The SwiftNIO floor over real sockets, writing through its channel or, as `kindling-bench floor
/// --io nio-direct`, to each socket itself: the same answers and deliveries as the epoll floor
/// either way, so the lean probe's three floors differ only in how they do the I/O.
@Suite struct FloorServerTests {
    @Test(arguments: [false, true])
    func answersEveryRequestAndDeliversPutsToTheOtherListeners(directWrites: Bool) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let hub = FloorHub()
        let channel = try await FloorServer.bind(port: 0, group: group, directWrites: directWrites, hub: hub)
        let checked = Result { () throws -> Void in
            let port = try #require(channel.localAddress?.port)
            try EpollFloorServerTests.answersEveryRequestAndDeliversPuts(port: port)
        }
        // Every connection (two listeners and a writer) wrote its socket itself, or none did.
        let direct = try await channel.eventLoop.submit { hub.directSockets }.get()
        #expect(direct == (directWrites ? 3 : 0))
        try await channel.close()
        try await group.shutdownGracefully()
        try checked.get()
    }
}
#endif
