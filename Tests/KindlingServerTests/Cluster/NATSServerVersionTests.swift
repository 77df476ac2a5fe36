import Testing

@testable import KindlingServer

/// What Kindling says about the nats-server version a node connects to.
@Suite
struct NATSServerVersionTests {
    @Test func versionsParseAndOrder() throws {
        let old = try #require(NATSServerVersion("2.9.10"))
        let candidate = try #require(NATSServerVersion("2.11.0-RC.1"))
        #expect(old < candidate)
        #expect(candidate == NATSServerVersion.exactFencing)
        #expect(NATSServerVersion("2.10") == nil)
        #expect(NATSServerVersion("two.ten.one") == nil)
        #expect(NATSServerVersion("2.15.1+build") == NATSServerVersion(major: 2, minor: 15, patch: 1))
    }

    @Test func theFloorAndTheCrashLossRangeAreNamed() {
        #expect(NATSServerVersion("2.9.10")?.concerns.count == 1)
        #expect(NATSServerVersion("2.10.19")?.concerns.count == 1)
        #expect(NATSServerVersion("2.10.21")?.concerns.count == 2)
        #expect(NATSServerVersion("2.10.21")?.concerns.first?.contains("Jepsen") == true)
        #expect(NATSServerVersion("2.11.0")?.concerns == [])
        #expect(NATSServerVersion("2.15.1")?.concerns == [])
    }
}
