import ArgumentParser
import Foundation
import KindlingCore
import KindlingProtocol
import KindlingServer

/// Where a client command's requests go: the server and the namespace, read from the same
/// database URL the SDKs take (`http://127.0.0.1:9000?ns=demo`, `https://demo.example.com`)
/// and `--ns`, so the URL the README and the server's banner give works here unchanged.
struct RemoteTarget: Equatable {
    /// The namespace when neither the URL nor `--ns` names one.
    static let defaultNamespace = "kindling"

    /// The server's address: scheme, host, port and any path prefix; no query, no final `/`.
    var server: String
    var namespace: String
    /// The URL or `--ns` named the namespace (it is not the default).
    var isNamespaceNamed: Bool
    /// The bearer token sent to this server: the admin credential, unless `kindling migrate`
    /// reads a source database with its own (`--from-auth`) or none.
    var credential: String? = adminCredential
    /// Where the bearer tokens come from instead, when they run out and are renewed
    /// (`--from-credential`).
    var tokens: ServiceAccountTokens?

    /// Reads `url`. The namespace is `?ns=`, else the one the host name gives as the server
    /// reads a Host header (`NamespaceName.named(byHost:)`), else `option`, else the default; when
    /// the URL names one and `option` another, neither is guessed at: that is an error.
    init(url text: String, namespace option: String?) throws(ArgumentParser.ValidationError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw ValidationError("Invalid URL \(text): expected http://HOST:PORT, optionally with ?ns=NAME.")
        }
        guard scheme == "http" || scheme == "https" else {
            throw ValidationError("Invalid URL \(text): the scheme must be http or https.")
        }
        let parameter = components.queryItems?.last { $0.name == "ns" }?.value.flatMap { $0.isEmpty ? nil : $0 }
        let named: (namespace: String, source: String)? =
            parameter.map { ($0, "?ns=\($0)") } ?? NamespaceName.named(byHost: host).map { ($0, "its host name \(host)") }
        if let named, let option, named.namespace != option {
            throw ValidationError(
                "--ns \(option) disagrees with the URL \(text), which names the namespace \(named.namespace) (\(named.source)). Give one of them.")
        }
        namespace = named?.namespace ?? option ?? RemoteTarget.defaultNamespace
        isNamespaceNamed = named != nil || option != nil
        guard NamespaceName.isValid(namespace) else {
            throw ValidationError("Invalid namespace: \(NamespaceName.rule).")
        }
        var address = components
        address.query = nil
        address.fragment = nil
        while address.path.hasSuffix("/") { address.path.removeLast() }
        guard let server = address.string else { throw ValidationError("Invalid URL \(text).") }
        self.server = server
    }

    /// The REST address of `path` (`/<path>.json?ns=…` plus `extra` parameters, each starting
    /// with `&`).
    func restURL(path: String, _ extra: String = "") throws -> URL {
        let parsed = try parsePath(path)
        let encoded = parsed.keys.map {
            $0.string.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? $0.string
        }.joined(separator: "/")
        // The root's address is /.json.
        return try url("/" + encoded + ".json?ns=" + namespace + extra)
    }

    /// The address of one of the server's settings (`/.settings/<name>.json?ns=…`).
    func settingsURL(_ name: String) throws -> URL {
        try url("/.settings/\(name).json?ns=" + namespace)
    }

    /// The address of one of the server's inspection endpoints (`/.inspect/<name>?ns=…`).
    func inspectURL(_ name: String) throws -> URL {
        try url("/.inspect/\(name)?ns=" + namespace)
    }

    /// The bearer token to send now: a current one from `tokens`, else `credential`.
    func bearer() async throws -> String? {
        guard let tokens else { return credential }
        return try await Self.reported { () async throws(ServiceAccountTokens.Failure) in try await tokens.accessToken() }
    }

    /// A GET of `url` with the bearer token. A 401 when tokens are renewed is tried once more
    /// with a new one: the source ended the token before its time, or its clock is ahead.
    func get(_ url: URL) async throws -> [UInt8] {
        var (status, body) = try await restResponse("GET", url, bytes: nil, credential: try await bearer())
        if status == 401, let tokens {
            let renewed = try await Self.reported { () async throws(ServiceAccountTokens.Failure) in try await tokens.renew() }
            (status, body) = try await restResponse("GET", url, bytes: nil, credential: renewed)
        }
        return try accepted(status, body)
    }

    /// A token from `take`; one that cannot be had is reported and ends the command.
    static func reported(_ take: () async throws(ServiceAccountTokens.Failure) -> String) async throws -> String {
        do throws(ServiceAccountTokens.Failure) {
            return try await take()
        } catch {
            printError("error: \(error)")
            if case .unreachable = error { throw ClientExit.unreachable }
            throw ClientExit.refused
        }
    }

    static func == (one: RemoteTarget, other: RemoteTarget) -> Bool {
        one.server == other.server && one.namespace == other.namespace && one.isNamespaceNamed == other.isNamespaceNamed
            && one.credential == other.credential && one.tokens === other.tokens
    }

    /// The URL for the realtime SDK: the server with `?ns=`.
    var databaseURL: String { server + "?ns=" + namespace }

    private func url(_ suffix: String) throws(ArgumentParser.ValidationError) -> URL {
        guard let url = URL(string: server + suffix) else { throw ValidationError("Invalid URL \(server).") }
        return url
    }
}
