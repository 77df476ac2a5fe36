import Foundation
import NIOSSL

/// A certificate chain and its key, loaded from `TLSFiles` and checked, ready to serve: the one
/// place the files are read, at start-up and on every reload, so both refuse the same mistakes
/// with the same messages.
struct TLSIdentity: Sendable {
    /// The TLS context new connections are served with.
    let context: NIOSSLContext
    /// Which leaf certificate it is, for the logs.
    let summary: TLSCertificateSummary

    /// Reads and checks `files`: the chain parses, the key parses and is not encrypted, and the key
    /// belongs to the leaf certificate (BoringSSL compares them when the context takes the key).
    static func load(_ files: TLSFiles) throws(TLSFileError) -> TLSIdentity {
        let chain = try certificates(in: files.certificateChain)
        let key = try privateKey(in: files.privateKey)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch NIOSSLError.failedToLoadPrivateKey {
            throw .keyDoesNotMatchCertificate(certificateFile: files.certificateChain, keyFile: files.privateKey)
        } catch {
            throw .refused(certificateFile: files.certificateChain, keyFile: files.privateKey, reason: "\(error)")
        }
        // `chain` is not empty: `certificates(in:)` refuses a file without one.
        let leaf = chain[0]
        let serial = leaf.serialNumber.map { String($0, radix: 16).leftPadded }.joined()
        return TLSIdentity(context: context, summary: TLSCertificateSummary(serial: serial, notValidAfter: Int(leaf.notValidAfter)))
    }

    private static func read(_ file: String) throws(TLSFileError) -> [UInt8] {
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw .unreadable(file: file, reason: (error as NSError).localizedDescription)
        }
    }

    private static func certificates(in file: String) throws(TLSFileError) -> [NIOSSLCertificate] {
        let bytes = try read(file)
        guard String(decoding: bytes, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else { throw .noCertificate(file: file) }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(bytes)
        } catch {
            throw .invalidCertificate(file: file)
        }
        guard !chain.isEmpty else { throw .noCertificate(file: file) }
        return chain
    }

    private static func privateKey(in file: String) throws(TLSFileError) -> NIOSSLPrivateKey {
        let bytes = try read(file)
        let text = String(decoding: bytes, as: UTF8.self)
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED") {
            throw .encryptedPrivateKey(file: file)
        }
        let markers = ["-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----"]
        guard markers.contains(where: text.contains) else { throw .noPrivateKey(file: file) }
        do {
            return try NIOSSLPrivateKey(bytes: bytes, format: .pem)
        } catch {
            throw .invalidPrivateKey(file: file)
        }
    }
}

extension String {
    /// Two hex digits for a byte.
    fileprivate var leftPadded: String { count == 1 ? "0" + self : self }
}
