import NIOSSL

/// TLS set-ups for tests that speak `wss://` and `https://` to a server with a certificate made
/// in the test.
public enum TestTLS {
    /// A client configuration that trusts only `caPEM` (the test's own CA).
    public static func trusting(caPEM: String) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)))
        return configuration
    }

    /// The SNI name for `host`: none for an IP address (TLS forbids it; the certificate is then
    /// checked against the address).
    static func serverName(_ host: String) -> String? {
        host.contains(":") || host.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) ? nil : host
    }
}
