/// What the students on one event loop committed, per location, and how long their check-ins and
/// check-outs took (from the first attempt to the `ok`, datastale retries included).
public final class SeatsLedger {
    public private(set) var checkIns: [Int]
    public private(set) var checkOuts: [Int]
    public let latency = LatencyRecorder()
    /// Transactions given up after 25 datastale replies in a row (the SDKs' limit).
    public private(set) var abandoned = 0

    init(locations: Int) {
        checkIns = Array(repeating: 0, count: locations)
        checkOuts = Array(repeating: 0, count: locations)
    }

    func committed(checkIn: Bool, at location: Int) {
        if checkIn { checkIns[location] += 1 } else { checkOuts[location] += 1 }
    }

    func abandon() { abandoned += 1 }

    /// The ledger's counts, to merge from every loop.
    var summary: SeatsHistory {
        SeatsHistory(checkIns: checkIns, checkOuts: checkOuts, abandoned: abandoned)
    }
}
