import Foundation
import KindlingCore
@testable import KindlingServer
import KindlingTesting
import Logging
import NATSClient
import NATSTesting
import Testing

/// What the two serialized cluster suites (`ClusterNodeTests`, `ClusterFaultTests`) share: NATS
/// clusters started and always shut down, node configurations and processes, and reading the
/// log stream.
protocol ClusterSuite {}

extension ClusterSuite {
    static func configuration(_ nats: NATSTestCluster, node: String, leaseTime: Duration = .seconds(3)) -> ServerConfiguration {
        configuration(urls: nats.urls, node: node, leaseTime: leaseTime)
    }

    /// A real `kindling serve --cluster` process (node `node`, a one-second lease) keeping its
    /// data in `directory`: for the tests that kill or stop a node, which needs a process.
    /// The directory is removed once the test and every process started on it let go of it.
    static func startNodeProcess(
        _ nats: NATSTestCluster, node: String, dataDirectory directory: ClusterScratchDirectory
    ) async throws -> ServerProcess {
        try await ServerProcess.start(
            dataDirectory: directory.path, arguments: ["--cluster", nats.urls.joined(separator: ","), "--node-id", node, "--lease-seconds", "1"],
            keeping: directory)
    }

    /// A node reaching NATS at `urls` (a test's proxies, say).
    static func configuration(urls: [String], node: String, leaseTime: Duration = .seconds(3)) -> ServerConfiguration {
        var logger = Logger(label: "kindling-cluster-test")
        logger.logLevel = ProcessInfo.processInfo.environment["KINDLING_TEST_LOG"] == nil ? .critical : .warning
        return ServerConfiguration(port: 0, cluster: ClusterConfiguration(urls: urls, nodeID: node, leaseTime: leaseTime), logger: logger)
    }

    /// Starts a three-server NATS cluster for the body and always shuts it down. With
    /// `advertise` false its servers do not tell clients each other's URLs; with
    /// `proxiedRoutes` a server can be cut off from its peers (`NATSTestCluster.isolate`).
    static func withNATS(
        advertise: Bool = true, proxiedRoutes: Bool = false, executable: URL? = nil, _ body: (NATSTestCluster) async throws -> Void
    ) async throws {
        // A port taken by another process between its choice and the server's bind fails the
        // start now and then on a busy machine: try again with new ports.
        var started: NATSTestCluster?
        for attempt in 1...3 where started == nil {
            do {
                started = try await NATSTestCluster.start(size: 3, advertise: advertise, proxiedRoutes: proxiedRoutes, executable: executable)
            } catch {
                if attempt == 3 { throw error }
            }
        }
        let nats = try #require(started)
        do {
            try await body(nats)
        } catch {
            await nats.shutdown()
            throw error
        }
        await nats.shutdown()
    }

    /// A cluster whose servers do not advertise their own addresses, each behind a `TCPProxy`
    /// that a test can cut or stall: a node given only the proxies' URLs cannot reconnect around
    /// them. The proxies are closed after the body.
    static func withProxiedNATS(_ body: (NATSTestCluster, [TCPProxy]) async throws -> Void) async throws {
        try await withNATS(advertise: false) { nats in
            var proxies: [TCPProxy] = []
            for server in nats.servers { proxies.append(try await TCPProxy.start(forwardingTo: server.port)) }
            do {
                try await body(nats, proxies)
            } catch {
                for proxy in proxies { await proxy.close() }
                throw error
            }
            for proxy in proxies { await proxy.close() }
        }
    }

    /// The `nats://` URLs of the proxies.
    static func urls(of proxies: [TCPProxy]) -> [String] { proxies.map { "nats://127.0.0.1:\($0.port)" } }

    /// The namespace's log messages after stream sequence `after`, in order.
    static func logMessages(_ js: JetStream, namespace: String, after: UInt64) async throws -> [StoredMessage] {
        let subject = "kindling.log." + namespace
        let last = try await js.lastMessage(stream: "KINDLING_LOG", subject: subject).sequence
        guard last > after else { return [] }
        var messages: [StoredMessage] = []
        for sequence in (after + 1)...last {
            let message = try await js.message(stream: "KINDLING_LOG", sequence: sequence)
            if message.subject == subject { messages.append(message) }
        }
        return messages
    }

    /// The message ids (`<node>.<lease revision>.<last record>`) of those messages.
    static func messageIDs(_ js: JetStream, namespace: String, after: UInt64) async throws -> [String] {
        try await logMessages(js, namespace: namespace, after: after).map { $0.headers?["Nats-Msg-Id"] ?? "" }
    }

    /// The bucket of the namespaces' leases (`kindling_leases`).
    static func leases(_ js: JetStream) async throws -> KeyValue {
        try await js.keyValue(ClusterNode.leaseBucket)
    }

    /// The node named by `namespace`'s lease key in `leases` (see `leases(_:)`); nil while the
    /// key is empty.
    static func leaseHolder(_ leases: KeyValue, of namespace: String) async throws -> String? {
        try await leases.get(namespace).map { String(decoding: $0.value, as: UTF8.self) }
    }

    static func jetStream(_ nats: NATSTestCluster) async throws -> (NATSClient, JetStream) {
        let client = try await NATSClient.connect(nats.urls)
        return (client, JetStream(client: client, timeout: .seconds(5)))
    }

    func json(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }
}
