import NIOSSL
import Synchronization

/// The TLS identity a server hands to each new connection, and its replacement on reload.
///
/// Each accepted connection takes the context in force when it is accepted and keeps it, so a
/// reload changes what new connections see while open ones carry on undisturbed; a reload that
/// fails leaves the identity in force as it was.
final class ServerTLS: Sendable {
    let files: TLSFiles
    private let identity: Mutex<TLSIdentity>

    init(files: TLSFiles) throws(TLSFileError) {
        self.files = files
        self.identity = Mutex(try TLSIdentity.load(files))
    }

    /// The context for a connection accepted now.
    var context: NIOSSLContext { identity.withLock { $0.context } }

    /// The certificate in force.
    var summary: TLSCertificateSummary { identity.withLock { $0.summary } }

    /// Reads the files again and, if they load, serves new connections with them.
    func reload() throws(TLSFileError) -> TLSCertificateSummary {
        let loaded = try TLSIdentity.load(files)
        identity.withLock { $0 = loaded }
        return loaded.summary
    }
}
