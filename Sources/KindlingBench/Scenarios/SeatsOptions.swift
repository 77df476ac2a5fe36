import KindlingCore

/// The parameters of a study-spot run.
public struct SeatsOptions: Sendable {
    /// Students checking in and out, one connection each.
    public var students: Int
    /// Study locations; student i uses location i mod locations.
    public var locations: Int
    /// Seats at each location (the counter starts here and must stay within 0…seats).
    public var seats: Int
    /// Connections watching every location, checking each count they see.
    public var observers: Int
    /// How long students keep checking in and out.
    public var duration: Duration
    /// Show a progress line on standard error.
    public var progress: Bool

    public init(students: Int, locations: Int, seats: Int, observers: Int, duration: Duration, progress: Bool) {
        self.students = students
        self.locations = locations
        self.seats = seats
        self.observers = observers
        self.duration = duration
        self.progress = progress
    }

    var parameters: [String: String] {
        ["students": "\(students)", "locations": "\(locations)", "seats": "\(seats)", "observers": "\(observers)", "seconds": "\(duration.seconds)"]
    }

    /// The path of location `index`'s free-seat counter, as listened to and written.
    static func counterPath(_ index: Int) -> String { "/seats/l\(index)/free" }

    /// The transaction hash of every count 0…seats+1, as the SDKs compute it from the value they
    /// last saw (one past the total, so a count gone wrong is still sent and found out).
    func hashes() -> [[UInt8]] {
        (0...(seats + 1)).map { Array(Node(.number(Double($0))).hash.utf8) }
    }
}
