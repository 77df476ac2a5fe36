/// Where a server's TLS certificate and key live (`kindling serve --tls-cert FILE --tls-key FILE`).
///
/// Paths rather than loaded bytes, because the files are read again on every reload
/// (`KindlingServer.reloadTLS()`, SIGHUP): a renewed certificate is picked up without a restart.
public struct TLSFiles: Sendable, Equatable {
    /// A PEM file with the server's certificate first, then any intermediates (leaf to root).
    public var certificateChain: String
    /// A PEM file with the certificate's private key: PKCS#8 (`PRIVATE KEY`), RSA (PKCS#1,
    /// `RSA PRIVATE KEY`) or EC (SEC1, `EC PRIVATE KEY`), unencrypted.
    public var privateKey: String

    public init(certificateChain: String, privateKey: String) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }
}
