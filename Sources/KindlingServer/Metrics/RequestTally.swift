/// Requests decided since the namespace last reported them, by action and outcome: a plain
/// value the namespace's state fills as it decides (no atomics, no locks on that path), handed
/// to the server's counters once per block of work, so a block of a thousand requests costs a
/// handful of atomic additions.
struct RequestTally: Sendable {
    private var counts = [Int](repeating: 0, count: RequestAction.allCases.count * RequestOutcome.allCases.count)
    /// The indexes of `counts` that are not zero, so a report visits only those.
    private var touched: [Int] = []

    var isEmpty: Bool { touched.isEmpty }

    mutating func record(_ action: RequestAction, _ outcome: RequestOutcome) {
        let index = action.rawValue * RequestOutcome.allCases.count + outcome.rawValue
        if counts[index] == 0 { touched.append(index) }
        counts[index] += 1
    }

    /// The counts recorded, then empties the tally.
    mutating func take() -> [(action: RequestAction, outcome: RequestOutcome, count: Int)] {
        let outcomes = RequestOutcome.allCases.count
        defer {
            for index in touched { counts[index] = 0 }
            touched = []
        }
        return touched.compactMap { index in
            guard let action = RequestAction(rawValue: index / outcomes), let outcome = RequestOutcome(rawValue: index % outcomes) else { return nil }
            return (action, outcome, counts[index])
        }
    }
}
