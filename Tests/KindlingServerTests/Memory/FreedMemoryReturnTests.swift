#if canImport(Glibc)
import Glibc
@testable import KindlingServer
import Logging
import NIOCore
import NIOPosix
import Testing

/// Memory a burst freed goes back to the system, even where the allocator could not give it
/// back by itself (blocks still in use above it).
@Suite(.serialized)
struct FreedMemoryReturnTests {
    @Test func freedBlocksBetweenLiveOnesAreReturned() throws {
        // 256 MiB in 4 KiB blocks, touched so they are resident; then all freed but one block
        // in 64, which keeps glibc from returning the rest on its own.
        let count = 65_536
        var blocks: [UnsafeMutableRawPointer] = []
        blocks.reserveCapacity(count)
        for _ in 0..<count {
            let block = try #require(malloc(4096))
            memset(block, 1, 4096)
            blocks.append(block)
        }
        for (index, block) in blocks.enumerated() where index % 64 != 0 { free(block) }
        defer { for (index, block) in blocks.enumerated() where index % 64 == 0 { free(block) } }
        let before = FreedMemoryReturn.residentBytes()
        #expect(before > 200 << 20)
        let returned = try #require(FreedMemoryReturn.returnFreeMemory(above: 64 << 20))
        #expect(returned > 128 << 20, "returned \(returned >> 20) MiB of \(before >> 20) MiB")
        // Under the threshold, nothing is tried.
        #expect(FreedMemoryReturn.returnFreeMemory(above: 1 << 40) == nil)
    }

    @Test func theServerChecksEveryInterval() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let workers = NIOThreadPool(numberOfThreads: 1)
        workers.start()
        let lines = LogLines()
        var logger = Logger(label: "kindling-test") { _ in LineCollector(lines: lines) }
        logger.logLevel = .trace
        // Freed memory the size of the threshold is always there to trim.
        let scratch = (0..<4096).compactMap { _ in malloc(4096) }
        for (index, block) in scratch.enumerated() where index % 2 == 0 { free(block) }
        let check = FreedMemoryReturn(eventLoop: group.next(), workers: workers, interval: .milliseconds(50), threshold: 0, logger: logger)
        var seen = false
        for _ in 0..<100 where !seen {
            try await Task.sleep(for: .milliseconds(20))
            seen = lines.contains("checked the allocator")
        }
        check.cancel()
        for (index, block) in scratch.enumerated() where index % 2 == 1 { free(block) }
        #expect(seen)
        try await workers.shutdownGracefully()
        try await group.shutdownGracefully()
    }
}
#endif
