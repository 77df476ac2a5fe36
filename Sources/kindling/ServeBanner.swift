import Foundation
import KindlingServer

/// What `kindling serve` prints once it listens: where, how to point each SDK at it, where its
/// data lives and what protects it. A new user copies these lines, so they name the exact
/// `databaseURL` and emulator settings for this server's address, scheme and namespace.
///
/// The first line, `Kindling is listening on HOST:PORT`, is read by scripts, tests and
/// kindling-bench: keep it first and keep its form.
struct ServeBanner {
    /// The address the server listens on, as given (`0.0.0.0`, `127.0.0.1`, `::1`, a name).
    var host: String
    var port: Int
    /// `http`, or `https` when the server speaks TLS (the realtime scheme follows: `ws`, `wss`).
    var scheme: String
    /// The namespace requests that name none use (`--namespace`).
    var namespace: String
    /// The data directory as an absolute path; nil when nothing is kept on disk.
    var dataDirectory: String?
    var fsync: String
    /// The rules and credential lines (`Serve.securitySummary`).
    var security: String
    /// The cluster's NATS URLs and this node's id (`--cluster`); nil for a single server.
    var cluster: String? = nil

    /// The host clients connect to: the loopback address for a wildcard listen address
    /// (other machines use this machine's address), in brackets when it is an IPv6 address.
    var clientHost: String {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        switch bare {
        case "0.0.0.0", "": return "127.0.0.1"
        case "::": return "[::1]"
        default: return bare.contains(":") ? "[\(bare)]" : bare
        }
    }

    var text: String {
        let address = "\(clientHost):\(port)"
        let listening = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let realtime = scheme == "https" ? "wss" : "ws"
        let databaseURL = "\(scheme)://\(address)?ns=\(namespace)"
        var lines = [
            "Kindling is listening on \(listening)",
            "  realtime: \(realtime)://\(address)/.ws?v=5&ns=\(namespace)",
            "  rest:     \(scheme)://\(address)/<path>.json?ns=\(namespace)",
            "  http:     \(scheme)://\(address)/.inspect/databases.json",
            "Point an SDK at it (namespace \(namespace) here; any other name works the same, e.g. ?ns=my-app):",
            "  databaseURL: \(databaseURL)",
        ]
        if scheme == "http" {
            let androidHost = ProtectedMode.isLoopback(host) || clientHost != host ? "10.0.2.2" : clientHost
            lines += [
                "  JS:          initializeApp({ databaseURL: \"\(databaseURL)\" }), or connectDatabaseEmulator(getDatabase(app), \"\(clientHost)\", \(port))",
                "  Admin SDKs:  FIREBASE_DATABASE_EMULATOR_HOST=\(address) with databaseURL https://\(namespace).firebaseio.com",
                "  iOS:         Database.database(url: \"\(databaseURL)\").useEmulator(withHost: \"\(clientHost)\", port: \(port))",
                "  Android:     FirebaseDatabase.getInstance(\"http://\(androidHost):\(port)?ns=\(namespace)\").useEmulator(\"\(androidHost)\", \(port))"
                    + (androidHost == "10.0.2.2" ? " (10.0.2.2 is this machine, seen from the Android emulator)" : ""),
                "  Swift SDK:   try Database(url: \"\(databaseURL)\") (KindlingClient)",
            ]
        } else {
            lines += [
                "  (every SDK: that databaseURL; the emulator settings speak plain HTTP and do not apply)",
                "  Swift SDK:   try Database(url: \"\(databaseURL)\") (KindlingClient; trustedCertificatesPEM: for a private CA)",
            ]
        }
        if let cluster {
            lines.append("Data: the cluster's NATS JetStream stream (\(cluster))")
        } else {
            lines.append("Data: " + (dataDirectory.map { "\($0) (fsync \(fsync))" } ?? "in memory only"))
        }
        lines.append(security)
        return lines.joined(separator: "\n")
    }

    /// `path` made absolute against the working directory, as the banner shows it.
    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
