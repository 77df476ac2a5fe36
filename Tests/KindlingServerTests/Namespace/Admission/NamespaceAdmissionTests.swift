import Dispatch
import KindlingCore
import Logging
import Testing

@testable import KindlingServer

/// A closing connection's onDisconnect writes pass the namespace's admission like any write:
/// made through the checkpoint when writes can be taken, refused (and not put in the tree)
/// when storage is failing. No socket: the namespace is driven through its own entry points.
@Suite(.timeLimit(.minutes(1)))
struct NamespaceAdmissionTests {
    static let connection = ConnectionID(value: 3)

    /// A namespace with one connection whose onDisconnect sets `/gone` to true.
    static func namespaceWithRegistration() throws -> Namespace {
        let namespace = Namespace(name: "t", logger: Logger(label: "test"))
        namespace.runNow { $0.state.connect(connection, sessionToken: 1) }
        namespace.submit(connection, [.operation(number: 1, .onDisconnectSet(path: try Path("gone"), data: true))])
        return namespace
    }

    @Test func onDisconnectWritesAreMadeAtACloseWhenWritesCanBeTaken() throws {
        let namespace = try Self.namespaceWithRegistration()
        namespace.detach(Self.connection)
        #expect(namespace.sizeSample()?.root.child(at: try Path("gone")) == Node(.bool(true)))
    }

    @Test func onDisconnectWritesAreRefusedAtACloseWhileStorageFails() throws {
        let namespace = try Self.namespaceWithRegistration()
        namespace.runNow { $0.durability = .failed }
        namespace.detach(Self.connection)
        let sample = try #require(namespace.sizeSample())
        #expect(sample.root.child(at: try Path("gone")).isEmpty)
        #expect(sample.version == 0)
        #expect(namespace.runNow { $0.state.connections[Self.connection] } == nil)
    }
}
