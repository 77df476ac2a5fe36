/// Send times of a connection's requests in flight, by request number: with at most `capacity`
/// in flight and numbers rising by one, no two of them share a slot.
struct InFlightClock {
    private var sent: [UInt64]

    init(capacity: Int) {
        sent = Array(repeating: 0, count: max(capacity, 1))
    }

    mutating func sending(_ number: Int) {
        sent[number % sent.count] = MonotonicClock.nanoseconds()
    }

    func sentAt(_ number: Int) -> UInt64 {
        sent[number % sent.count]
    }
}
