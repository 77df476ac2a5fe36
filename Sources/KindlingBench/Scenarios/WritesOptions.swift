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

    public init(writers: Int, pipeline: Int, duration: Duration, fsync: String, progress: Bool) {
        self.writers = writers
        self.pipeline = pipeline
        self.duration = duration
        self.fsync = fsync
        self.progress = progress
    }

    var parameters: [String: String] {
        ["writers": "\(writers)", "pipeline": "\(pipeline)", "seconds": "\(duration.seconds)", "fsync": fsync]
    }
}
