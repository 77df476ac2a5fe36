import ArgumentParser
import Foundation
import KindlingBench
import NIOCore
import NIOPosix

/// `kindling-bench floor`: serves `FloorServer`, the least any SwiftNIO WebSocket server does per
/// request, for the lean probe to measure beside `kindling serve` and Redis.
struct FloorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "floor",
        abstract: "Serve a bare SwiftNIO WebSocket answerer (no database, no log) for the lean probe: the floor under Kindling's per-request cost."
    )

    @Option(help: "The port to listen on (127.0.0.1).")
    var port = 9000

    func validate() throws {
        guard (1...65_535).contains(port) else { throw ValidationError("--port must be 1…65535.") }
    }

    func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try await FloorServer.bind(port: port, group: group)
        // Unbuffered, so a script waiting for the line sees it at once.
        FileHandle.standardOutput.write(Data("floor listening on 127.0.0.1:\(port)\n".utf8))
        try await channel.closeFuture.get()
    }
}
