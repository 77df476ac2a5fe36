/// What one observer saw of every location: how many changes, and any count outside 0…seats.
public struct SeatsObservation: Sendable, Equatable {
    /// Changes seen per location after the initial value.
    public var changes: [Int]
    /// The last count seen per location.
    public var last: [Int?]
    /// Counts seen outside 0…seats, as "location: count" (the first few).
    public var outOfRange: [String]
    /// Messages the observer could not read as a count.
    public var unreadable: Int

    public init(locations: Int) {
        changes = Array(repeating: 0, count: locations)
        last = Array(repeating: nil, count: locations)
        outOfRange = []
        unreadable = 0
    }
}
