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

}
