/// The parameters of a soak run: how long, how many well-behaved clients, and how many of each
/// hostile kind.
public struct SoakOptions: Sendable {
    /// How long the mix runs.
    public var duration: Duration
    /// How often the normal clients' latency and the server's memory are read and reported.
    public var interval: Duration
    /// Listener/writer pairs of normal realtime clients.
    public var pairs: Int
    /// How often each normal writer writes.
    public var writeEvery: Duration
    /// Connections flooding WebSocket pings without reading the pongs.
    public var pingFlooders: Int
    /// Connections pipelining REST GETs without reading the answers.
    public var nonReaders: Int
    /// Connections sending request headers a byte at a time.
    public var slowloris: Int
    /// New namespaces asked for per second (reads of `?ns=<fresh name>`).
    public var namespacesPerSecond: Int
    /// Connections sending part of a large body and then nothing.
    public var partialBodies: Int
    /// The server's resident memory may not exceed this many megabytes at any reading.
    public var maxResidentMegabytes: Int
    /// Show a progress line on standard error.
    public var progress: Bool

    public init(
        duration: Duration = .seconds(600), interval: Duration = .seconds(30), pairs: Int = 8, writeEvery: Duration = .milliseconds(100),
        pingFlooders: Int = 2, nonReaders: Int = 2, slowloris: Int = 50, namespacesPerSecond: Int = 5, partialBodies: Int = 4,
        maxResidentMegabytes: Int = 1024, progress: Bool = true
    ) {
        self.duration = duration
        self.interval = interval
        self.pairs = pairs
        self.writeEvery = writeEvery
        self.pingFlooders = pingFlooders
        self.nonReaders = nonReaders
        self.slowloris = slowloris
        self.namespacesPerSecond = namespacesPerSecond
        self.partialBodies = partialBodies
        self.maxResidentMegabytes = maxResidentMegabytes
        self.progress = progress
    }

    var parameters: [String: String] {
        [
            "duration": "\(duration)", "pairs": "\(pairs)", "ping flooders": "\(pingFlooders)", "non-readers": "\(nonReaders)",
            "slowloris": "\(slowloris)", "namespaces/s": "\(namespacesPerSecond)", "partial bodies": "\(partialBodies)",
            "max RSS": "\(maxResidentMegabytes) MB",
        ]
    }
}
