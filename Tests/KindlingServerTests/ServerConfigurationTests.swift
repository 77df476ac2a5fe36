import KindlingServer
import Testing

struct ServerConfigurationTests {
    /// A core is left to the namespaces' executors, the logs and snapshots, and there is always a
    /// loop, however few cores the machine reports.
    @Test func theDefaultEventLoopsLeaveOneCoreFree() {
        #expect(ServerConfiguration.defaultEventLoopThreads(cores: 0) == 1)
        #expect(ServerConfiguration.defaultEventLoopThreads(cores: 1) == 1)
        #expect(ServerConfiguration.defaultEventLoopThreads(cores: 2) == 1)
        #expect(ServerConfiguration.defaultEventLoopThreads(cores: 8) == 7)
    }
}
