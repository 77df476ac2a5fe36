import Logging
import Synchronization

/// The namespaces of a server, each created on first use.
final class NamespaceRegistry: Sendable {
    private let namespaces = Mutex<[String: Namespace]>([:])
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    /// The namespace called `name`, created if new.
    func namespace(_ name: String) -> Namespace {
        namespaces.withLock { all in
            if let existing = all[name] { return existing }
            let created = Namespace(name: name, logger: logger)
            all[name] = created
            logger.info("created namespace", metadata: ["namespace": "\(name)"])
            return created
        }
    }

    /// The names of the namespaces in use, sorted.
    var names: [String] { namespaces.withLock { Array($0.keys) }.sorted() }
}
