/// The study-spot invariants, checked from the students' history, the observers' view and the
/// final counts read back from the server.
public enum SeatsVerdict {
    public static func checks(
        seats: Int,
        history: SeatsHistory,
        observations: [SeatsObservation],
        final: [Int?]
    ) -> [InvariantCheck] {
        var range: [String] = []
        for (index, count) in final.enumerated() {
            if let count, count < 0 || count > seats { range.append("l\(index) ends at \(count)") }
        }
        for observation in observations { range += observation.outOfRange }

        var lost: [String] = []
        for (index, count) in final.enumerated() {
            let expected = seats - history.checkIns[index] + history.checkOuts[index]
            if count != expected {
                lost.append(
                    "l\(index): \(count.map(String.init) ?? "missing") free, history says \(expected) (\(history.checkIns[index]) in, \(history.checkOuts[index]) out)"
                )
            }
        }

        var unseen: [String] = []
        for (observer, observation) in observations.enumerated() {
            for (index, changes) in observation.changes.enumerated() {
                let commits = history.checkIns[index] + history.checkOuts[index]
                if changes != commits { unseen.append("observer \(observer) saw \(changes) changes of l\(index), students committed \(commits)") }
            }
            if observation.unreadable > 0 { unseen.append("observer \(observer): \(observation.unreadable) unreadable messages") }
        }

        return [
            InvariantCheck(
                name: "seats within 0…\(seats)", passed: range.isEmpty, detail: describe(range, ok: "every count seen and every final count in range")
            ),
            InvariantCheck(
                name: "final counts equal the history", passed: lost.isEmpty,
                detail: describe(lost, ok: "\(final.count) locations match \(history.commits) commits")),
            InvariantCheck(
                name: "no lost update", passed: unseen.isEmpty && lost.isEmpty,
                detail: describe(unseen, ok: "observers saw exactly one change per commit")),
        ]
    }

    private static func describe(_ problems: [String], ok: String) -> String {
        guard !problems.isEmpty else { return ok }
        return "\(problems.count) violations: " + problems.prefix(3).joined(separator: "; ")
    }
}
