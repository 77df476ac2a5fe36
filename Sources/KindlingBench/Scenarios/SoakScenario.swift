import Foundation
import Histogram
import KindlingCore
import KindlingProtocol
import NIOCore
import NIOPosix
import Synchronization

/// `soak`: normal realtime clients (listener/writer pairs) alongside hostile ones (ping
/// floods, non-reading clients, slowloris, namespace floods, partial bodies) for a set time.
/// Every interval it reads the normal clients' write-to-event p99, probes a REST read, and
/// samples the server's resident memory; it fails when an interval delivers fewer than half the
/// normal clients' writes (or the probe fails: no connection, or no whole answer within 5 s) or
/// the memory exceeds its bound.
public enum SoakScenario {
    public static func run(kindling target: BenchTarget, group: MultiThreadedEventLoopGroup, options: SoakOptions) async throws -> ScenarioReport {
        let namespace = "soak"
        let connector = RealtimeConnector(target: target, group: group, namespace: namespace)
        let setup = try await connector.connect { _ in IdleBehaviour() }
        _ = try await setup.callOK(.put(path: Path(keys: ["big"]), data: .string(String(repeating: "b", count: 256 * 1024)), hash: nil))
        let samples = SoakSamples()
        var links: [RealtimeLink] = [setup]
        for pair in 0..<options.pairs {
            let path = try Path("/pairs/p\(pair)")
            links.append(try await connector.connect { _ in SoakListener(path: path, samples: samples) })
        }
        for pair in 0..<options.pairs {
            let path = "/pairs/p\(pair)"
            links.append(try await connector.connect { _ in SoakWriter(path: path, every: options.writeEvery) })
        }
        let started = ContinuousClock.now
        let hostiles = SoakHostiles(target: target, group: group, namespace: namespace, deadline: started + options.duration)
        let attackers = Task {
            await withTaskGroup(of: Void.self) { tasks in
                for _ in 0..<options.pingFlooders { tasks.addTask { await hostiles.pingFlood() } }
                for _ in 0..<options.nonReaders { tasks.addTask { await hostiles.nonReader(path: "/big") } }
                for _ in 0..<options.slowloris { tasks.addTask { await hostiles.slowloris() } }
                if options.namespacesPerSecond > 0 { tasks.addTask { await hostiles.namespaceFlood(perSecond: options.namespacesPerSecond) } }
                for _ in 0..<options.partialBodies { tasks.addTask { await hostiles.partialBody() } }
            }
        }
        var report = ScenarioReport(scenario: "soak", system: "kindling", parameters: options.parameters)
        var overall = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
        var peakResident = 0
        var stalled: [String] = []
        var overLimit: [String] = []
        _ = samples.take()
        var intervalStart = ContinuousClock.now
        while ContinuousClock.now < started + options.duration {
            let remaining = started + options.duration - ContinuousClock.now
            try? await Task.sleep(for: min(options.interval, remaining))
            let at = Int((ContinuousClock.now - started).seconds.rounded())
            let taken = samples.take()
            // Every pair's writes, at least half of them, must have reached its listener.
            let expected = Double(options.pairs) * (ContinuousClock.now - intervalStart).seconds / options.writeEvery.seconds
            intervalStart = ContinuousClock.now
            var window = Histogram<UInt64>(highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
            for nanoseconds in taken {
                let microseconds = min(max(nanoseconds / 1000, 1), 120_000_000)
                _ = window.record(microseconds)
                _ = overall.record(microseconds)
            }
            let probe = await probeREST(target: target, group: group, namespace: namespace)
            let resident = ProcessSample(pid: target.pid).residentBytes
            if let resident { peakResident = max(peakResident, resident) }
            let p99 = taken.isEmpty ? 0 : Double(window.valueAtPercentile(99)) / 1000
            report.measurements.append(Measurement("p99 write→event to \(at) s", p99, "ms"))
            report.measurements.append(Measurement("events to \(at) s", Double(taken.count), "events"))
            if case .success(let seconds) = probe { report.measurements.append(Measurement("REST probe at \(at) s", seconds * 1000, "ms")) }
            if let resident {
                report.measurements.append(Measurement("server RSS at \(at) s", Double(resident) / 1_048_576, "MB"))
                if resident > options.maxResidentMegabytes * 1_048_576 { overLimit.append("\(resident / 1_048_576) MB at \(at) s") }
            }
            switch probe {
            case .failure(let failure): stalled.append("\(at) s (\(taken.count) events, probe failed: \(failure))")
            case .success where Double(taken.count) < expected / 2: stalled.append("\(at) s (\(taken.count) events, probe ok)")
            case .success: break
            }
            if options.progress {
                let probeText: String
                switch probe {
                case .success(let seconds): probeText = "\(Int(seconds * 1000)) ms"
                case .failure(let failure): probeText = "failed: \(failure)"
                }
                FileHandle.standardError.write(
                    Data(
                        "soak \(at) s: p99 \(p99) ms over \(taken.count) events, probe \(probeText), server RSS \((resident ?? 0) / 1_048_576) MB\n"
                            .utf8
                    ))
            }
        }
        attackers.cancel()
        await attackers.value
        for link in links { await link.close() }
        report.latencies = [LatencySummary(name: "normal clients: write → event", histograms: [overall])]
        report.serverResidentBytes = peakResident > 0 ? peakResident : nil
        report.measurements += [
            Measurement("server peak RSS", Double(peakResident) / 1_048_576, "MB"),
            Measurement("hostile connections opened", Double(hostiles.tally.connections.load(ordering: .relaxed)), "connections"),
            Measurement("hostile connections cut off by the server", Double(hostiles.tally.cutOff.load(ordering: .relaxed)), "connections"),
            Measurement("hostile connects refused", Double(hostiles.tally.refusedConnects.load(ordering: .relaxed)), "connects"),
            Measurement("hostile bytes sent", Double(hostiles.tally.bytesSent.load(ordering: .relaxed)) / 1_048_576, "MB"),
        ]
        report.checks = [
            InvariantCheck(
                name: "normal clients served in every interval", passed: stalled.isEmpty,
                detail: stalled.isEmpty
                    ? "every interval delivered at least half the writes and answered the REST probe"
                    : "stalled: " + stalled.prefix(5).joined(separator: ", ")
            ),
            InvariantCheck(
                name: "server RSS within \(options.maxResidentMegabytes) MB", passed: overLimit.isEmpty,
                detail: overLimit.isEmpty ? "peak \(peakResident / 1_048_576) MB" : "over: " + overLimit.prefix(5).joined(separator: ", ")
            ),
        ]
        return report
    }

    /// A REST read on a fresh connection: its time in seconds, or why it failed (no connection,
    /// a refused send, a close, or no whole answer within 5 s, with the first line it did get).
    static func probeREST(target: BenchTarget, group: any EventLoopGroup, namespace: String) async -> Result<Double, RESTProbeFailure> {
        let begun = ContinuousClock.now
        let socket: SoakSocket
        do {
            socket = try await SoakSocket.connect(to: target, group: group, reading: true)
        } catch {
            return .failure(RESTProbeFailure("no connection: \(error)"))
        }
        defer { socket.close() }
        do {
            try await socket.send("GET /pairs/p0.json?ns=\(namespace) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        } catch {
            return .failure(RESTProbeFailure("send refused: \(error)"))
        }
        while ContinuousClock.now - begun < .seconds(5) {
            // Read `isClosed` first: bytes that came before the close are in `received` by then.
            let closed = socket.isClosed
            let received = socket.received
            if received.hasPrefix("HTTP/1.1 200"), received.contains("\r\n\r\n{") { return .success((ContinuousClock.now - begun).seconds) }
            if closed { return .failure(RESTProbeFailure("closed after \(RESTProbeFailure.firstLine(of: received))")) }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return .failure(RESTProbeFailure("no whole answer in 5 s, got \(RESTProbeFailure.firstLine(of: socket.received))"))
    }
}

/// Why the soak's REST probe got no answer, for the stalled interval's detail.
struct RESTProbeFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    /// The response's first line, or "nothing" when no byte came.
    static func firstLine(of received: String) -> String {
        guard !received.isEmpty else { return "nothing" }
        return "\"" + (received.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? received) + "\""
    }
}
