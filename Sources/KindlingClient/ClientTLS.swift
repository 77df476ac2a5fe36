import NIOSSL

/// The TLS context of an `https://` database: the system's trust roots, plus any certificates the
/// app trusts besides them (a private CA, or a self-signed server). Made once per `Database`, so
/// reconnects reuse it instead of reloading the system roots each time.
enum ClientTLS {
    static func context(trusting pem: String?) throws(DatabaseError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let pem {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            } catch {
                throw .invalidArgument("The trusted certificates are not PEM certificates: \(error)")
            }
            guard !certificates.isEmpty else { throw .invalidArgument("The trusted certificates hold no PEM certificate") }
            configuration.additionalTrustRoots = [.certificates(certificates)]
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw .invalidArgument("Cannot set up TLS: \(error)")
        }
    }
}
