import KindlingCore
import KindlingProtocol

extension SessionInput {
    /// Turns a realtime request into what its namespace runs. Credentials are verified here, on
    /// the connection's event loop, so the namespace's queue only records who the connection is.
    /// Nil for a request that needs no answer and changes nothing.
    static func from(_ request: Request, verifier: CredentialVerifier) -> SessionInput? {
        let operation: Operation
        switch request.action {
        case .stats, .appCheck, .unappCheck:
            operation = .acknowledge(data: nil)
        case .auth(let auth):
            switch verifier.authenticate(auth.credential, as: auth.isGoogleToken ? .accessToken : .idToken, now: Namespace.now()) {
            case .success(let identity):
                // The Admin SDK's `databaseAuthVariableOverride`: `noauth` or a null `authvar`
                // acts as nobody, an `authvar` object as that user.
                if let override = auth.authOverride, !AuthState.isOverride(override) {
                    operation = .refuseCredential(Refusal(AuthRefusal.invalidToken("authvar must be a JSON object or null")))
                } else {
                    operation = .authenticate(identity.acting(as: auth.noAuth ? .null : auth.authOverride))
                }
            case .failure(let refusal):
                operation = .refuseCredential(Refusal(refusal))
            }
        case .unauth:
            operation = .authenticate(.anonymous)
        case .listen(let listen):
            operation = .listen(path: listen.path, query: listen.query, tag: listen.tag, hash: listen.hash, wireQuery: listen.wireQuery)
        case .unlisten(let path, let query):
            operation = .unlisten(path: path, query: query)
        case .put(let path, let data, let hash):
            operation = .set(path: path, data: data, precondition: hash.map(Precondition.hash))
        case .merge(let path, let members):
            operation = .update(path: path, members: members)
        case .onDisconnectPut(let path, let data):
            operation = .onDisconnectSet(path: path, data: data)
        case .onDisconnectMerge(let path, let members):
            operation = .onDisconnectUpdate(path: path, members: members)
        case .onDisconnectCancel(let path):
            operation = .onDisconnectCancel(path: path)
        case .get(let path, let query):
            operation = .get(path: path, query: query)
        case .getInfo:
            // `.info` lives in the client (connected state, clock offset); the server holds none of it.
            operation = .acknowledge(data: Array("null".utf8))
        case .echo(let data):
            operation = .acknowledge(data: Array(JSONWriter.string(data).utf8))
        case .unknown(let action):
            guard let number = request.number else { return nil }
            return .reject(number: number, status: .unknownAction, message: "Unknown action \(ValidationError.quoted(action))")
        }
        return .operation(number: request.number, operation)
    }
}
