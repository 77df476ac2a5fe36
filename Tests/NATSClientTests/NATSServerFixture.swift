import NATSClient
import NATSTesting

/// Starts a single test server for the body and always shuts it down.
func withNATSServer<T>(_ body: (NATSTestServer) async throws -> T) async throws -> T {
    let server = try await NATSTestServer.start()
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// Starts a three-server cluster for the body and always shuts it down.
func withNATSCluster<T>(_ body: (NATSTestCluster) async throws -> T) async throws -> T {
    let cluster = try await NATSTestCluster.start()
    do {
        let result = try await body(cluster)
        await cluster.shutdown()
        return result
    } catch {
        await cluster.shutdown()
        throw error
    }
}

/// Options with quick reconnects for tests.
func testOptions(_ servers: [String]) -> NATSOptions {
    var options = NATSOptions(servers: servers)
    options.reconnectWait = .milliseconds(50)
    options.maxReconnectWait = .milliseconds(250)
    return options
}
