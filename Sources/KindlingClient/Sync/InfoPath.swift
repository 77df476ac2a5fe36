import KindlingCore

/// The client's own data under `/.info`, which it answers itself: the server has none.
public enum InfoPath: String, Sendable, CaseIterable {
    /// Whether the connection to the server is up.
    case connected
    /// The server's clock minus this device's, in milliseconds, from the last handshake.
    case serverTimeOffset

    /// The info path a reference path names (`.info/connected`), if any.
    init?(_ relative: String) {
        let parts = relative.split(separator: "/")
        guard parts.count == 2, parts[0] == ".info", let info = InfoPath(rawValue: String(parts[1])) else { return nil }
        self = info
    }

    /// The path a snapshot of it names: its last key alone (`.info` is no valid key), so its
    /// `key` is `connected` or `serverTimeOffset`, as in the Firebase SDKs.
    var path: Path {
        switch self {
        case .connected: return Path(keys: ["connected"])
        case .serverTimeOffset: return Path(keys: ["serverTimeOffset"])
        }
    }

    /// Its location in a URL.
    var urlPath: String { "/.info/\(rawValue)" }
}
