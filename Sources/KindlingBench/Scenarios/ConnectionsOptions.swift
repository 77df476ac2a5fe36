/// The parameters of an idle-connections run.
public struct ConnectionsOptions: Sendable {
    /// Connections to open and keep idle.
    public var count: Int
    /// Source addresses to spread them over (127.0.0.2, 127.0.0.3, …), past the ephemeral-port
    /// limit of one address.
    public var sources: Int
    /// Also listen on a path of its own per connection (as an app's open screen would).
    public var listen: Bool
    /// Show a progress line on standard error.
    public var progress: Bool

    public init(count: Int, sources: Int, listen: Bool, progress: Bool) {
        self.count = count
        self.sources = sources
        self.listen = listen
        self.progress = progress
    }

    var parameters: [String: String] {
        ["connections": "\(count)", "sources": "\(sources)", "listen": listen ? "yes" : "no"]
    }

    /// The source address of connection `index`.
    func source(_ index: Int) -> String { "127.0.0.\(2 + index % sources)" }
}
