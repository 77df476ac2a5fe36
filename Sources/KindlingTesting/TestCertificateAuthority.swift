import Crypto
import CryptoExtras
import Foundation
import SwiftASN1
import X509

/// A certificate authority made in the test, and server certificates it issues for `127.0.0.1`
/// and `localhost`: TLS tests need a chain a client can be told to trust, and no key file is
/// committed to the repository.
public struct TestCertificateAuthority: Sendable {
    /// The forms a server key file comes in.
    public enum KeyForm: Sendable, CaseIterable {
        /// P-256 in PKCS#8 (`PRIVATE KEY`).
        case ecPKCS8
        /// P-256 in SEC1 (`EC PRIVATE KEY`).
        case ecSEC1
        /// RSA 2048 in PKCS#1 (`RSA PRIVATE KEY`).
        case rsaPKCS1
        /// RSA 2048 in PKCS#8 (`PRIVATE KEY`).
        case rsaPKCS8
    }

    /// A server certificate and its key, as PEM files' contents.
    public struct Leaf: Sendable {
        public var certificatePEM: String
        public var keyPEM: String
        /// The certificate's serial number in hex, as `TLSCertificateSummary` prints it.
        public var serial: String

        public init(certificatePEM: String, keyPEM: String, serial: String) {
            self.certificatePEM = certificatePEM
            self.keyPEM = keyPEM
            self.serial = serial
        }
    }

    private let key: P256.Signing.PrivateKey
    private let name: DistinguishedName
    /// The CA's certificate, to trust in clients.
    public let certificatePEM: String

    public init(commonName: String = "Kindling Test CA") throws {
        key = P256.Signing.PrivateKey()
        name = try DistinguishedName { CommonName(commonName) }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: .init(key.publicKey),
            notValidBefore: now - 3600,
            notValidAfter: now + 86_400,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(key)
        )
        certificatePEM = try certificate.serializeAsPEM().pemString
    }

    /// Issues a server certificate for `127.0.0.1`, `::1` and `localhost` with serial `serial`, and
    /// its key in `form`; valid for a day, or until `notValidAfter`.
    public func issue(
        serial: UInt64, commonName: String = "kindling test server", keyForm form: KeyForm = .ecPKCS8, notValidAfter: Date? = nil
    ) throws -> Leaf {
        let publicKey: Certificate.PublicKey
        let keyPEM: String
        switch form {
        case .ecPKCS8, .ecSEC1:
            let leafKey = P256.Signing.PrivateKey()
            publicKey = .init(leafKey.publicKey)
            keyPEM = form == .ecPKCS8 ? leafKey.pemRepresentation : Self.sec1PEM(leafKey)
        case .rsaPKCS1, .rsaPKCS8:
            let leafKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            publicKey = .init(leafKey.publicKey)
            keyPEM = form == .rsaPKCS1 ? leafKey.pemRepresentation : leafKey.pkcs8PEMRepresentation
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(serial),
            publicKey: publicKey,
            notValidBefore: now - 7200,
            notValidAfter: notValidAfter ?? now + 86_400,
            issuer: name,
            subject: try DistinguishedName { CommonName(commonName) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"),
                    .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                    .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
                ])
            },
            issuerPrivateKey: .init(key)
        )
        let serialHex = Array(certificate.serialNumber.bytes).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        return Leaf(certificatePEM: try certificate.serializeAsPEM().pemString, keyPEM: keyPEM, serial: serialHex)
    }

    /// A P-256 key in SEC1 form (RFC 5915), which swift-crypto does not write: the private
    /// scalar, the curve's OID and the public point, DER-encoded by hand.
    static func sec1PEM(_ key: P256.Signing.PrivateKey) -> String {
        let scalar = [UInt8](key.rawRepresentation)
        let point = [UInt8](key.publicKey.x963Representation)
        let curve: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]  // prime256v1
        var body: [UInt8] = [0x02, 0x01, 0x01, 0x04, UInt8(scalar.count)] + scalar
        body += [0xA0, UInt8(curve.count)] + curve
        body += [0xA1, UInt8(point.count + 3), 0x03, UInt8(point.count + 1), 0x00] + point
        let der: [UInt8] = [0x30, UInt8(body.count)] + body
        let base64 = Data(der).base64EncodedString(options: .lineLength64Characters).replacingOccurrences(of: "\r\n", with: "\n")
        return "-----BEGIN EC PRIVATE KEY-----\n\(base64)\n-----END EC PRIVATE KEY-----\n"
    }
}
