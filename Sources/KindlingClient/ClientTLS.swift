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

    /// The name sent in SNI and checked against the certificate; an IP address is not sent (TLS
    /// forbids it) and the certificate is then checked against the address connected to.
    static func serverName(_ host: String) -> String? {
        host.contains(":") || host.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) ? nil : host
    }
}
