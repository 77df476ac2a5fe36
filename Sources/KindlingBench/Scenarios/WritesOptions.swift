import KindlingProtocol

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
    /// The size of each written value: 0 writes the write's number (`17`); more writes a JSON
    /// string of that many bytes, quotes included, starting with the number (`"17xxx…"`; longer
    /// only when the number and quotes alone are), the same bytes to Redis.
    public var valueBytes: Int
    /// The namespace to write in (with one namespace), nil for a fresh one per run: a name known
    /// beforehand lets a profiler (`/.settings/profile.json?ns=`) or a watcher attach to it.
    public var namespace: String?

    public init(
        writers: Int, pipeline: Int, duration: Duration, fsync: String, progress: Bool, namespaces: Int = 1, valueBytes: Int = 0,
        namespace: String? = nil
    ) {
        self.namespace = namespace
        self.writers = writers
        self.pipeline = pipeline
        self.duration = duration
        self.fsync = fsync
        self.progress = progress
        // At least one: the writers are spread over them by remainder.
        self.namespaces = max(1, namespaces)
        self.valueBytes = valueBytes
    }

    /// Appends the value of write number `sequence` (see `valueBytes`).
    func appendValue(sequence: Int, to bytes: inout [UInt8]) {
        guard valueBytes > 0 else { return WireLiterals.appendDecimal(sequence, to: &bytes) }
        let start = bytes.count
        bytes.append(UInt8(ascii: "\""))
        WireLiterals.appendDecimal(sequence, to: &bytes)
        let used = bytes.count - start
        if valueBytes > used + 1 { bytes.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: valueBytes - used - 1)) }
        bytes.append(UInt8(ascii: "\""))
    }

    var parameters: [String: String] {
        var parameters = ["writers": "\(writers)", "pipeline": "\(pipeline)", "seconds": "\(duration.seconds)", "fsync": fsync]
        if namespaces > 1 { parameters["namespaces"] = "\(namespaces)" }
        if valueBytes > 0 { parameters["value bytes"] = "\(valueBytes)" }
        return parameters
    }
}
