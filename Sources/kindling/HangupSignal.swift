import Dispatch
import Foundation
import KindlingServer
import Logging

/// SIGHUP, the operator's "read your files again": one signal source for the process, which
/// reloads the rules file (when there is one) and the TLS certificate and key (when serving TLS).
/// Two sources for one signal would each see only some of the signals.
enum HangupSignal {
    static func install(server: KindlingServer, rules: RulesFileWatcher?, logger: Logger) -> any DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler {
            rules?.reloadNow()
            reloadTLS(server: server, logger: logger)
        }
        source.resume()
        return source
    }

    private static func reloadTLS(server: KindlingServer, logger: Logger) {
        do throws(TLSFileError) {
            guard let certificate = try server.reloadTLS() else { return }
            logger.notice("TLS certificate reloaded: new connections get \(certificate)")
            if certificate.isExpired { logger.warning("the reloaded TLS certificate has expired: clients will refuse it") }
        } catch {
            logger.error("TLS files do not load; the certificate in force stays: \(error)")
        }
    }
}
