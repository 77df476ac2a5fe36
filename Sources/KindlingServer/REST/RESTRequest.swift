import KindlingCore
import KindlingProtocol
import NIOHTTP1

/// A REST request to `/<path>.json`, read from its head: what it asks for and how the answer
/// must look. Everything a client can get wrong in the URI or headers is found here, before the
/// namespace is involved.
struct RESTRequest: Sendable {
    enum Method: String, Sendable {
        case get = "GET", put = "PUT", post = "POST", patch = "PATCH", delete = "DELETE"
    }

    /// `print=`: compact JSON (the default), indented, or no body at all (204).
    enum Print: Sendable {
        case compact, pretty, silent
    }

    var method: Method
    /// One of the server's own endpoints instead of data (its `path` is then the root).
    var endpoint: ServerEndpoint?
    var path: Path
    var namespace: String
    var print: Print
    var format: JSONFormat
    /// `shallow=true`: an object's children are answered as `true`.
    var shallow: Bool
    var query: Query
    /// `timeout=`: how long a read may take on the server.
    var readLimit: RESTReadLimit?
    /// `writeSizeLimit=`: how long a write may be expected to take.
    var writeSizeLimit: RESTWriteSizeLimit?
    /// `download=<file name>` on a GET: the answer is an attachment a browser saves.
    var download: String?
    /// `callback=<function>` on a GET (JSONP): the answer is a script calling it with the data.
    var callback: String?
    /// `X-Firebase-ETag: true`: answer with an `ETag` header.
    var wantsETag: Bool
    var ifMatch: String?
    var ifNoneMatch: String?
    /// `Accept: text/event-stream` on a GET.
    var isEventStream: Bool
    /// A reverse proxy relayed the request for someone else (see `MetricsAccess.proxyHeaders`).
    var isRelayed: Bool
    /// The credential the request carries and how it came (verified by the handler), if any.
    var credential: (token: String, kind: CredentialKind)?
    /// `auth_variable_override`: the identity an admin caller acts as (an object, or null for
    /// an unauthenticated user).
    var authOverride: JSONValue?
    /// `at=` or `changes=true`: a read of the data's past instead of its present.
    var past: PastRead?

    /// The path of a REST URI (`/a/b.json` is `/a/b`), or nil when it does not end in `.json`.
    static func dataPath(_ uriPath: String) -> String? {
        guard uriPath.hasSuffix(".json") else { return nil }
        return String(uriPath.dropLast(5))
    }

    init(head: HTTPRequestHead, target: RequestTarget, defaultNamespace: String) throws(RESTError) {
        let parameters = target.parameters
        method = try RESTRequest.method(head, parameters)
        endpoint = ServerEndpoint(uriPath: target.path)
        if endpoint != nil {
            path = .root
        } else {
            guard let text = RESTRequest.dataPath(target.path) else {
                throw RESTError(.notFound, "append .json to your request URI to use the REST API")
            }
            if let segment = target.undecodableSegment {
                throw RESTError(.badRequest, "Invalid path: \(ValidationError.quoted(segment)) is not percent-encoded UTF-8")
            }
            do throws(ValidationError) {
                path = try Path(text)
            } catch {
                throw RESTError(error)
            }
        }
        namespace = RequestTarget.namespace(parameters: parameters, host: head.headers.first(name: "host"), fallback: defaultNamespace)
        guard NamespaceName.isValid(namespace) else { throw RESTError(.badRequest, "Invalid namespace: \(NamespaceName.rule)") }
        switch parameters["print"] {
        case nil: print = .compact
        case "pretty"?: print = .pretty
        case "silent"?: print = .silent
        case let other?: throw RESTError(.badRequest, "print must be pretty or silent, not \(ValidationError.quoted(other))")
        }
        switch parameters["format"] {
        case nil: format = .plain
        case "export"?: format = .export
        case let other?: throw RESTError(.badRequest, "format must be export, not \(ValidationError.quoted(other))")
        }
        switch parameters["shallow"] {
        case nil, "false"?: shallow = false
        case "true"?: shallow = true
        case let other?: throw RESTError(.badRequest, "shallow must be true or false, not \(ValidationError.quoted(other))")
        }
        query = try RESTRequest.query(parameters, shallow: shallow)
        readLimit = try parameters["timeout"].map { text throws(RESTError) in try RESTReadLimit(text) }
        writeSizeLimit = try parameters["writeSizeLimit"].map { text throws(RESTError) in try RESTWriteSizeLimit(parameter: text) }
        download = try RESTRequest.download(parameters, method: method)
        callback = try RESTRequest.callback(parameters, method: method)
        wantsETag = head.headers.first(name: "x-firebase-etag")?.lowercased() == "true"
        ifMatch = head.headers.first(name: "if-match").map(ETag.normalize)
        ifNoneMatch = head.headers.first(name: "if-none-match").map(ETag.normalize)
        isEventStream = method == .get && head.headers["accept"].contains { $0.lowercased().contains("text/event-stream") }
        isRelayed = MetricsAccess.proxyHeaders.contains { head.headers.contains(name: $0) }
        credential = RESTRequest.credential(head, parameters)
        authOverride = try RESTRequest.authOverride(parameters)
        past = try PastRead(parameters: parameters, method: method, isEventStream: isEventStream)
        if isEventStream, callback != nil || download != nil {
            throw RESTError(.badRequest, "callback and download are not supported on an event stream")
        }
        if ifMatch != nil, method == .post || method == .patch {
            throw RESTError(.badRequest, "if-match is supported on PUT and DELETE only")
        }
    }

    /// The method, after `X-HTTP-Method-Override` (header or query parameter) on a POST.
    private static func method(_ head: HTTPRequestHead, _ parameters: [String: String]) throws(RESTError) -> Method {
        var name = head.method.rawValue
        if head.method == .POST,
            let override = head.headers.first(name: "x-http-method-override") ?? parameters["x-http-method-override"]
        {
            name = override.uppercased()
        }
        guard let method = Method(rawValue: name) else {
            throw RESTError(.methodNotAllowed, "Method \(ValidationError.quoted(name)) is not supported; use GET, PUT, POST, PATCH or DELETE")
        }
        return method
    }

    /// The query parameters as a query. firebase-tools lists keys with `shallow=true&limitToFirst=N&
    /// startAfter=<key>`: no `orderBy` and a raw, unquoted key, meaning key order.
    private static func query(_ parameters: [String: String], shallow: Bool) throws(RESTError) -> Query {
        var restParameters = parameters.filter { Query.restParameterNames.contains($0.key) }
        if shallow, restParameters["orderBy"] == nil, !restParameters.isEmpty {
            restParameters["orderBy"] = "\"$key\""
            for (name, value) in restParameters where name.hasPrefix("start") || name.hasPrefix("end") || name == "equalTo" {
                if case .string? = try? JSONParser.parse(value) { continue }
                restParameters[name] = JSONWriter.string(.string(value))
            }
        }
        do throws(ValidationError) {
            return try Query(restParameters: restParameters)
        } catch {
            throw RESTError(error)
        }
    }

    /// The file name of `download=`: any text but control characters (it goes into a header),
    /// up to 255 bytes, on a GET only.
    private static func download(_ parameters: [String: String], method: Method) throws(RESTError) -> String? {
        guard let name = parameters["download"] else { return nil }
        guard method == .get else { throw RESTError(.badRequest, "download is supported on GET only") }
        // Format characters too: a right-to-left override would show `gpj.exe` as `exe.jpg`.
        let isHidden = { (scalar: Unicode.Scalar) in [.control, .format].contains(scalar.properties.generalCategory) }
        guard !name.isEmpty, name.utf8.count <= 255, !name.unicodeScalars.contains(where: isHidden) else {
            throw RESTError(.badRequest, "download must be a file name of 1 to 255 bytes without control or format characters")
        }
        return name
    }

    /// The function of `callback=`: a JavaScript name or dotted names (`cb`, `app.onData`), up
    /// to 128 characters, on a GET only. Anything else could run as script in the caller's page.
    private static func callback(_ parameters: [String: String], method: Method) throws(RESTError) -> String? {
        guard let name = parameters["callback"] else { return nil }
        guard method == .get else { throw RESTError(.badRequest, "callback is supported on GET only") }
        let isIdentifier = { (part: Substring.UTF8View) -> Bool in
            guard let first = part.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            return part.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "_"), UInt8(ascii: "$"):
                    true
                default: false
                }
            }
        }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard name.utf8.count <= 128, parts.allSatisfy({ isIdentifier($0.utf8) }) else {
            throw RESTError(.badRequest, "callback must be a JavaScript function name such as cb or app.onData, up to 128 characters")
        }
        if let refused = parts.first(where: { RESTRequest.refusedCallbackNames.contains(String($0)) }) {
            throw RESTError(.badRequest, "callback may not use \(ValidationError.quoted(String(refused))): it would run the data as code")
        }
        return name
    }

    /// Names a callback may not contain: JavaScript's reserved words (not function names), and
    /// functions that run a string as code, which would make stored data a script.
    static let refusedCallbackNames: Set<String> = [
        "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else", "enum", "export",
        "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof", "new", "null", "return", "super",
        "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while", "with", "yield", "let", "static", "await",
        "implements", "interface", "package", "private", "protected", "public", "eval", "Function", "setTimeout",
        "setInterval", "setImmediate", "execScript", "constructor", "__proto__", "prototype", "location", "document", "write",
        "writeln",
    ]

    /// `Authorization: Bearer <token>` or `?access_token=` (an access token, an admin secret, or
    /// the emulator's `owner`), else `?auth=` (an ID token or an admin secret).
    private static func credential(_ head: HTTPRequestHead, _ parameters: [String: String]) -> (token: String, kind: CredentialKind)? {
        if let header = head.headers.first(name: "authorization"), header.lowercased().hasPrefix("bearer ") {
            return (String(header.dropFirst(7)), .accessToken)
        }
        if let token = parameters["access_token"] { return (token, .accessToken) }
        if let token = parameters["auth"] { return (token, .idToken) }
        return nil
    }

    private static func authOverride(_ parameters: [String: String]) throws(RESTError) -> JSONValue? {
        guard let text = parameters["auth_variable_override"] else { return nil }
        guard let value = try? JSONParser.parse(text), AuthState.isOverride(value) else {
            throw RESTError(.badRequest, "auth_variable_override must be a JSON object or null")
        }
        return value
    }

    /// Who the request acts as: its credential verified, then firebase-admin's
    /// `auth_variable_override`, honoured for admins only. No credential is anonymous.
    func identity(verifier: CredentialVerifier, now: Int64) throws(RESTError) -> AuthState {
        var auth = AuthState.anonymous
        if let credential {
            switch verifier.authenticate(credential.token, as: credential.kind, now: now) {
            case .success(let verified): auth = verified
            case .failure(let refusal): throw RESTError(refusal: Refusal(refusal))
            }
        }
        return auth.acting(as: authOverride)
    }
}
