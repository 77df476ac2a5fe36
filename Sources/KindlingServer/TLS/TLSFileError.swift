/// Why a TLS certificate or key file was refused, at start-up or on a reload. Each case names the
/// file, so an operator can tell which of the two to fix.
public enum TLSFileError: Error, Equatable, CustomStringConvertible {
    /// The file could not be read (missing, unreadable).
    case unreadable(file: String, reason: String)
    /// The certificate file holds no PEM certificate (`-----BEGIN CERTIFICATE-----`).
    case noCertificate(file: String)
    /// A certificate in the file is not valid PEM/DER.
    case invalidCertificate(file: String)
    /// The key file holds no private key block this server reads.
    case noPrivateKey(file: String)
    /// The key is encrypted with a passphrase, which a server restarting unattended cannot type.
    case encryptedPrivateKey(file: String)
    /// The key block is there but does not parse.
    case invalidPrivateKey(file: String)
    /// The key is not the one the certificate was issued for.
    case keyDoesNotMatchCertificate(certificateFile: String, keyFile: String)
    /// The TLS library refused the pair for another reason.
    case refused(certificateFile: String, keyFile: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let file, let reason):
            return "cannot read \(file): \(reason)"
        case .noCertificate(let file):
            return "\(file) holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)"
        case .invalidCertificate(let file):
            return "\(file): a certificate in it does not parse"
        case .noPrivateKey(let file):
            return "\(file) holds no private key (expected -----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY)"
        case .encryptedPrivateKey(let file):
            return "\(file): the private key is encrypted; give an unencrypted key (e.g. `openssl pkey -in KEY -out PLAIN`)"
        case .invalidPrivateKey(let file):
            return "\(file): the private key does not parse"
        case .keyDoesNotMatchCertificate(let certificateFile, let keyFile):
            return "the private key in \(keyFile) does not match the certificate in \(certificateFile)"
        case .refused(let certificateFile, let keyFile, let reason):
            return "the TLS library refused \(certificateFile) with \(keyFile): \(reason)"
        }
    }
}
