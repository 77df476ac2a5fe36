import KindlingCore

/// One record of the profiler stream (`GET /.settings/profile.json`): an operation the
/// namespace decided, a write's broadcast to its listeners, or a realtime connection coming or
/// going, with the fields the Firebase CLI's `database:profile` report reads.
///
/// The checkpoint makes the operation and broadcast records while a profiler listens
/// (`ProfileTrail`); the namespace's shell adds what only it knows (how long the request
/// waited, the client's address) and hands them to the profilers.
struct ProfileRecord: Sendable {
    var name: ProfileOperation
    /// When it ran, in milliseconds since 1970.
    var timestamp: Int64
    /// The location, written as its segments; nil for a connection's coming and going.
    var path: Path?
    /// How long the server took to carry it out (`millis`), on a monotonic clock.
    var nanoseconds: UInt64?
    /// How long it waited between arriving and starting (`pendingTime`), when known.
    var pendingNanoseconds: UInt64?
    /// Bytes read or written: the JSON of the data written, the data read or first sent to a
    /// listener, or everything a broadcast sent.
    var bytes: Int?
    /// False when the security rules refused it.
    var allowed: Bool?
    /// The query of a read or listen (`querySet`).
    var query: Query?
    /// A filtered query whose order no `.indexOn` rule declares (hosted Firebase would send the
    /// whole location and the SDKs warn about it).
    var unIndexed: Bool?
    /// How many listeners a broadcast reached.
    var clientsUpdated: Int?
    /// The client's address (`client.remoteAddress`), when known.
    var client: String?
    /// When it started on the shell's monotonic clock, so the shell can tell how long it waited.
    var started: UInt64 = 0
    /// The realtime connection or event stream that asked, so the shell can name its address.
    var connection: ConnectionID?

    init(name: ProfileOperation, timestamp: Int64, path: Path? = nil) {
        self.name = name
        self.timestamp = timestamp
        self.path = path
    }
}
