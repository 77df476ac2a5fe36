/// The parameters of a durable-writes run.
public struct WritesOptions: Sendable {
    /// Connections writing, each to its own path (or key).
    public var writers: Int
    /// Writes each writer keeps in flight.
    public var pipeline: Int
    /// How long writers keep sending.
    public var duration: Duration
    /// The server's fsync mode, for the report (the caller starts the server with it).
    public var fsync: String
    /// Show a progress line on standard error.
    public var progress: Bool
    /// Namespaces the writers are spread over (writer `i` in namespace `i mod namespaces`): each
    /// namespace has its own serial executor and log, so more than one shows whether the server
    /// puts more than one core to work. Redis has one keyspace; its writers are unchanged.
    public var namespaces: Int

    public init(writers: Int, pipeline: Int, duration: Duration, fsync: String, progress: Bool, namespaces: Int = 1) {
        self.writers = writers
        self.pipeline = pipeline
        self.duration = duration
        self.fsync = fsync
        self.progress = progress
        self.namespaces = namespaces
    }

    var parameters: [String: String] {
        var parameters = ["writers": "\(writers)", "pipeline": "\(pipeline)", "seconds": "\(duration.seconds)", "fsync": fsync]
        if namespaces > 1 { parameters["namespaces"] = "\(namespaces)" }
        return parameters
    }
}
