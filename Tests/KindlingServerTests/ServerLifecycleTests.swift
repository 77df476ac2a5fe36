import KindlingTesting
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@testable import KindlingServer

/// The server's lifecycle as a pure state machine (starting, serving, draining, stopped), a live
/// server's second shutdown waiting for the first instead of stopping it again, and a start
/// refused for a port in use.
struct ServerLifecycleTests {
    /// The state's case, without the drain task.
    static func name(_ state: ServerLifecycle.State) -> String {
        switch state {
        case .starting: "starting"
        case .serving: "serving"
        case .draining: "draining"
        case .stopped(let drained): "stopped(drained: \(drained))"
        }
    }

    @Test func aServerStartsServesDrainsOnceAndStops() async throws {
        var lifecycle = ServerLifecycle()
        #expect(Self.name(lifecycle.state) == "starting")
        lifecycle.bound()
        #expect(Self.name(lifecycle.state) == "serving")

        var drains = 0
        let first = lifecycle.shutDown {
            drains += 1
            return Task { true }
        }
        #expect(Self.name(lifecycle.state) == "draining")
        // Asked again while it drains: the same drain, none started.
        let second = lifecycle.shutDown {
            drains += 1
            return Task { false }
        }
        #expect(drains == 1)
        guard case .wait(let running) = first, case .wait(let joined) = second else {
            Issue.record("a shutdown while serving or draining waits for the drain")
            return
        }
        #expect(running == joined)
        #expect(try await joined.value)

        lifecycle.drainEnded(drained: true)
        #expect(Self.name(lifecycle.state) == "stopped(drained: true)")
        // Stopped: nothing is done again, and the outcome is answered.
        guard case .answer(drained: true) = lifecycle.shutDown({ Task { false } }) else {
            Issue.record("a shutdown once stopped answers the first one's outcome")
            return
        }
        // Late reports change nothing.
        lifecycle.bound()
        lifecycle.drainEnded(drained: false)
        #expect(Self.name(lifecycle.state) == "stopped(drained: true)")
    }

    @Test func aDrainThatFailsStopsTheServerUndrained() async throws {
        var lifecycle = ServerLifecycle()
        lifecycle.bound()
        _ = lifecycle.shutDown { Task { true } }
        lifecycle.drainEnded(drained: false)
        #expect(Self.name(lifecycle.state) == "stopped(drained: false)")
    }

    @Test func aSecondShutdownOfARunningServerWaitsForTheFirst() async throws {
        let server = try await KindlingServer.start(ServerConfiguration(port: 0))
        async let first = server.shutdown()
        async let second = server.shutdown()
        let outcomes = try await (first, second)
        #expect(outcomes == (true, true))
        #expect(try await server.shutdown())
    }

    /// A port already taken is refused in words that name the address and what to change, and
    /// what the failed start took is given back (a second try on a free port starts).
    @Test func aPortInUseIsRefusedByNameAndAddress() async throws {
        let first = try await KindlingServer.start(ServerConfiguration(port: 0))
        do {
            let second = try await KindlingServer.start(ServerConfiguration(port: first.port))
            try await second.shutdown()
            Issue.record("a second server started on port \(first.port)")
        } catch let failure as ListenFailure {
            #expect(failure.description.hasPrefix("cannot listen on 127.0.0.1:\(first.port): the port is in use"), "\(failure)")
        }
        // The other refusals a listen meets, each with what to change.
        let privileged = ListenFailure(IOError(errnoCode: EACCES, reason: "bind"), host: "127.0.0.1", port: 80)
        #expect(privileged.description.hasPrefix("cannot listen on 127.0.0.1:80: a port below 1024 needs root"))
        let foreign = ListenFailure(IOError(errnoCode: EADDRNOTAVAIL, reason: "bind"), host: "10.1.2.3", port: 9000)
        #expect(foreign.reason.hasPrefix("10.1.2.3 is not an address of this machine"))
        let third = try await KindlingServer.start(ServerConfiguration(port: 0))
        #expect(third.port != first.port)
        try await third.shutdown()
        try await first.shutdown()
    }
}
