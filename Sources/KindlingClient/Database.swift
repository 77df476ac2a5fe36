import Foundation
import KindlingCore
import KindlingProtocol
import Synchronization

/// A connection to one Kindling (or Firebase Realtime Database-compatible) namespace.
///
/// Creating it starts connecting in the background; reads and writes made before the connection
/// is up are kept and sent, in order, once it is.
public final class Database: Sendable {
    let repo: Repo
    /// The observers `keepSynced(true)` holds, by path and query.
    private let keptSynced = Mutex<[String: Int]>([:])
    /// Persistence settings, read when it is turned on.
    private let persistenceSettings = Mutex<(cacheSize: UInt, directory: URL?)>((10 * 1024 * 1024, nil))
    /// Where observer callbacks and completion blocks run when the caller names no queue (the
    /// main queue by default); an observer keeps the queue it was registered with.
    public var callbackQueue: DispatchQueue {
        get { queue.withLock { $0 } }
        set { queue.withLock { $0 = newValue } }
    }
    private let queue: Mutex<DispatchQueue>

    /// `url` is `http://host:port?ns=NAME` (or `ws://…`); without `ns`, the first label of the
    /// host names the namespace, as the server itself would pick it. `https://` (or `wss://`)
    /// connects with TLS, trusting the system's roots and `trustedCertificatesPEM` (PEM
    /// certificates of a private CA or a self-signed server), which plain URLs ignore.
    public init(url: String, callbackQueue: DispatchQueue = .main, trustedCertificatesPEM: String? = nil) throws(DatabaseError) {
        guard let components = URLComponents(string: url), let host = components.host else {
            throw .invalidArgument("Not a database URL: \(url)")
        }
        let secure = components.scheme == "https" || components.scheme == "wss"
        let port = components.port ?? (secure ? 443 : 80)
        var namespace = components.queryItems?.last(where: { $0.name == "ns" })?.value ?? ""
        if namespace.isEmpty { namespace = NamespaceName.named(byHost: host) ?? "kindling" }
        self.repo = Repo(host: host, port: port, namespace: namespace, tls: secure ? try ClientTLS.context(trusting: trustedCertificatesPEM) : nil)
        self.queue = Mutex(callbackQueue)
        repo.connect()
        let identifier = ObjectIdentifier(self)
        Self.live.withLock { $0[identifier] = WeakDatabase(database: self) }
    }

    /// Nothing can reach the database any more (every reference holds it), so its socket and
    /// reconnect timer must not outlive it.
    deinit {
        let identifier = ObjectIdentifier(self)
        Self.live.withLock { $0[identifier] = nil }
        repo.shutdown()
    }

    /// The namespace this database talks to.
    public var namespace: String { repo.namespace }

    /// The root of the database.
    public func reference() -> DatabaseReference { DatabaseReference(database: self, path: .root) }

    /// The location at `path` (`"rooms/a"`; `".info/connected"` is the client's own status). A
    /// path that is not valid stops the program, as in the Firebase SDKs; for one built from
    /// input use `reference(validating:)`.
    public func reference(_ path: String) -> DatabaseReference { reference().child(path) }

    /// The same, named as in the Firebase SDKs.
    public func reference(withPath path: String) -> DatabaseReference { reference().child(path) }

    /// The location at `path`; throws `.invalidArgument` for a path that is not valid.
    public func reference(validating path: String) throws(DatabaseError) -> DatabaseReference {
        try reference().child(validating: path)
    }

    /// The database at `url`, one instance per URL for the life of the process, as Firebase's
    /// `Database.database(url:)`; a URL that is not a database URL stops the program.
    public static func database(url: String) -> Database {
        shared.withLock { databases in
            if let existing = databases[url] { return existing }
            do {
                let database = try Database(url: url)
                databases[url] = database
                return database
            } catch {
                preconditionFailure(error.localizedDescription)
            }
        }
    }

    private static let shared = Mutex<[String: Database]>([:])

    /// Points this database at a server on `host`:`port` (Firebase's emulator switch), keeping
    /// its namespace; call it before any other use, as Firebase requires (later, it stops the
    /// program, as Firebase raises). With Kindling the database URL already names the server,
    /// so this is for code written for Firebase's emulator.
    public func useEmulator(withHost host: String, port: Int) {
        guard repo.retarget(host: host, port: port) else {
            preconditionFailure("useEmulator(withHost:port:) must be called before any other use of the database")
        }
    }

    /// The location a full URL names (`http://host:port/rooms/a?ns=NAME`), which must be this
    /// database's (its host, port and namespace), as Firebase's `reference(fromURL:)`; a URL of
    /// another database, or not a URL, stops the program, as Firebase raises.
    public func reference(fromURL url: String) -> DatabaseReference {
        guard let components = URLComponents(string: url), let host = components.host else {
            preconditionFailure("reference(fromURL:): not a URL: \(url)")
        }
        let secure = components.scheme == "https" || components.scheme == "wss"
        let port = components.port ?? (secure ? 443 : 80)
        let named = components.queryItems?.last(where: { $0.name == "ns" })?.value ?? NamespaceName.named(byHost: host) ?? "kindling"
        guard host == repo.host, port == repo.port, named == namespace else {
            preconditionFailure("reference(fromURL:): \(url) is not this database (\(self.url(ofPath: "/")))")
        }
        let path = components.path.isEmpty ? "/" : components.path
        return path == "/" ? reference() : reference(String(path.dropFirst()))
    }

    /// Every database made in this process that is still in use, for `goOffline()` and
    /// `goOnline()` on all of them.
    static let live = Mutex<[ObjectIdentifier: WeakDatabase]>([:])

    /// A database held weakly.
    struct WeakDatabase: Sendable {
        weak var database: Database?
    }

    /// The URL of `path` (`/rooms/a`) in this database.
    func url(ofPath path: String) -> String {
        var components = URLComponents()
        components.scheme = repo.tls == nil ? "http" : "https"
        components.host = repo.host
        components.port = repo.port
        components.path = path
        components.queryItems = [URLQueryItem(name: "ns", value: namespace)]
        return components.string ?? "\(repo.host)\(path)"
    }

    /// Acts as the holder of `credential` (an ID token, or an admin secret) from now on, also
    /// after reconnects; nil signs out. Rules then see the token's claims as `auth`. Throws when
    /// the server refuses the credential. A refusal signs the client out, here or when the
    /// credential is sent again after a reconnect (a token that expired meanwhile), as the
    /// official SDKs do: the credential is dropped, the connection closes (`.info/connected`
    /// observers see it) and reopens anonymous, and observers of data that needed the
    /// credential are cancelled with the server's `permission_denied`.
    public func authenticate(with credential: String?) async throws(DatabaseError) {
        try await repo.authenticate(credential)
    }

    /// Closes the connection and stops reconnecting; local writes keep queueing.
    public func goOffline() { repo.goOffline() }

    /// Reconnects after `goOffline`.
    public func goOnline() { repo.goOnline() }

    /// Holds (or releases) a listen at `path` for `query` with no callback of the app's.
    func keepSynced(_ keep: Bool, path: Path, query: Query) {
        let key = "\(path)|\(query.identifier)"
        let repo = self.repo
        keptSynced.withLock { kept in
            if keep, kept[key] == nil {
                kept[key] = repo.observe(path: path, query: query, eventType: .value, queue: callbackQueue, callback: { _ in })
            } else if !keep, let handle = kept.removeValue(forKey: key) {
                repo.removeObserver(handle)
            }
        }
    }

    // MARK: Persistence

    /// Keeps the data of listened locations and every write the server has not acknowledged on
    /// disk, as Firebase's `isPersistenceEnabled`: an app killed while offline sends its writes,
    /// once each and in order, when it next runs, and its listeners start from the data they
    /// last had, offline too. Set it before any other use of the database (a reference's
    /// observer or write), as Firebase requires; setting it later stops the program, as
    /// Firebase raises. Off by default. `enablePersistence()` is the same, throwing.
    public var isPersistenceEnabled: Bool {
        get { repo.isPersistent }
        set {
            guard newValue, !repo.isPersistent else { return }
            do {
                try enablePersistence()
            } catch {
                preconditionFailure(error.localizedDescription)
            }
        }
    }

    /// The most bytes of server data kept on disk (10 MB by default, as Firebase; 1 MB to
    /// 100 MB); the data of locations no longer listened to goes first. Set before persistence.
    public var persistenceCacheSizeBytes: UInt {
        get { persistenceSettings.withLock { $0.cacheSize } }
        set { persistenceSettings.withLock { $0.cacheSize = min(max(newValue, 1024 * 1024), 100 * 1024 * 1024) } }
    }

    /// Where persistence keeps its files: by default a folder per database (host, port and
    /// namespace) under the user's Application Support folder (`~/.local/share` on Linux). Set
    /// before persistence.
    public var persistenceDirectory: URL {
        get { persistenceSettings.withLock { $0.directory } ?? defaultPersistenceDirectory }
        set { persistenceSettings.withLock { $0.directory = newValue } }
    }

    private var defaultPersistenceDirectory: URL {
        let base =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        let name = "\(repo.host)_\(repo.port)_\(namespace)".map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" }
        return base.appendingPathComponent("Kindling").appendingPathComponent(String(name))
    }

    /// Turns persistence on (see `isPersistenceEnabled`). Throws when its folder cannot be used,
    /// or when the database was already used.
    public func enablePersistence() throws(DatabaseError) {
        let settings = persistenceSettings.withLock { $0 }
        let store = try PersistentStore(directory: persistenceDirectory, cacheLimit: Int(settings.cacheSize))
        guard repo.enablePersistence(store) else {
            store.close()
            throw .invalidArgument("Persistence must be enabled before any other use of the database")
        }
    }

    /// The SDK's version (`KindlingVersion.current`, `MAJOR.MINOR.PATCH`), as Firebase's
    /// `sdkVersion()` gives its own: the package's release, which the server's and the
    /// command-line tool's share.
    public static func sdkVersion() -> String { KindlingVersion.current }

    /// Turns the SDK's log on or off for every database, as Firebase's: the connection's life and
    /// every frame sent and received, on standard error.
    public static func setLoggingEnabled(_ enabled: Bool) { ClientLog.isEnabled = enabled }

    /// Drops every write the server has not acknowledged, as Firebase's
    /// `purgeOutstandingWrites()`: each is undone locally, its completion gets `.cancelled`, and
    /// persistence forgets it. One already sent may still be applied by the server.
    public func purgeOutstandingWrites() { repo.purgeWrites() }

    /// Closes the connection for good; operations still waiting fail with `.disconnected`.
    public func shutdown() { repo.shutdown() }
}
