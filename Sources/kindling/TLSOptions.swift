import ArgumentParser
import KindlingServer

/// `kindling serve`'s TLS flags: serve `https://` and `wss://` on the port instead of plain HTTP.
struct TLSOptions: ParsableArguments {
    @Option(
        name: .customLong("tls-cert"),
        help: ArgumentHelp(
            "PEM certificate chain (the server's certificate first, then intermediates): serve https:// and wss:// on the port.",
            discussion:
                "Needs --tls-key. Point SDKs at databaseURL https://HOST:PORT?ns=NAME, without their emulator setting (that speaks plain HTTP). Both files are re-read on SIGHUP, so a renewed certificate needs no restart: new connections get it, open ones keep theirs; files that do not load are logged and the certificate in force stays."
        ))
    var certificate: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key of the certificate (PKCS#8, RSA or EC; unencrypted).")
    var key: String?

    func validate() throws {
        switch (certificate, key) {
        case (nil, nil), (.some, .some): return
        case (.some, nil): throw ValidationError("--tls-cert needs --tls-key (the certificate's private key).")
        case (nil, .some): throw ValidationError("--tls-key needs --tls-cert (the certificate chain).")
        }
    }

    /// The files to serve TLS with, or nil for plain HTTP.
    var files: TLSFiles? {
        guard let certificate, let key else { return nil }
        return TLSFiles(certificateChain: certificate, privateKey: key)
    }
}
