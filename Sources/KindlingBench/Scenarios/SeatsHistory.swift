/// Committed check-ins and check-outs per location, merged over all students.
public struct SeatsHistory: Sendable, Equatable {
    public var checkIns: [Int]
    public var checkOuts: [Int]
    public var abandoned: Int

    public init(checkIns: [Int], checkOuts: [Int], abandoned: Int) {
        self.checkIns = checkIns
        self.checkOuts = checkOuts
        self.abandoned = abandoned
    }

    public init(merging parts: [SeatsHistory], locations: Int) {
        checkIns = Array(repeating: 0, count: locations)
        checkOuts = Array(repeating: 0, count: locations)
        abandoned = 0
        for part in parts {
            for location in 0..<locations {
                checkIns[location] += part.checkIns[location]
                checkOuts[location] += part.checkOuts[location]
            }
            abandoned += part.abandoned
        }
    }

    public var commits: Int { checkIns.reduce(0, +) + checkOuts.reduce(0, +) }
}
