import KindlingCore
import KindlingProtocol

extension Action {
    /// What the request does, in the words of the SDK's API (`set`, `update`, `transaction`,
    /// `listen`, …), and the path it is about: named in errors, so a refusal says which call of
    /// many it answers.
    var operation: (name: String, path: String) {
        switch self {
        case .stats: return ("stats", "/")
        case .auth: return ("authenticate", "/")
        case .unauth: return ("sign out", "/")
        case .appCheck, .unappCheck: return ("app check", "/")
        case .listen(let listen): return ("listen", listen.path.description)
        case .unlisten(let path, _): return ("stop listening", path.description)
        case .put(let path, _, let hash): return (hash == nil ? "set" : "transaction", path.description)
        case .merge(let path, _): return ("update", path.description)
        case .onDisconnectPut(let path, _): return ("onDisconnect set", path.description)
        case .onDisconnectMerge(let path, _): return ("onDisconnect update", path.description)
        case .onDisconnectCancel(let path): return ("onDisconnect cancel", path.description)
        case .get(let path, _): return ("get", path.description)
        case .getInfo(let path): return ("get", path)
        case .echo: return ("echo", "/")
        case .unknown(let name): return (name, "/")
        }
    }
}
