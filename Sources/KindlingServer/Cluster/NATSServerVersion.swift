/// A nats-server version as its INFO reports it (`2.10.22`, `2.11.0-RC.1`), and what Kindling's
/// guarantees need of it (docs/cluster.md, "What an acknowledged write survives"). A value,
/// tested on its own.
struct NATSServerVersion: Comparable, Sendable {
    var major: Int
    var minor: Int
    var patch: Int

    /// Parses `major.minor.patch`, ignoring a pre-release or build suffix; nil otherwise.
    init?(_ text: String) {
        let core = text.split(whereSeparator: { $0 == "-" || $0 == "+" }).first ?? ""
        let parts = core.split(separator: ".")
        guard parts.count == 3, let major = Int(parts[0]), let minor = Int(parts[1]), let patch = Int(parts[2]) else { return nil }
        self.init(major: major, minor: minor, patch: patch)
    }

    init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// The first version whose stream leader checks an expected last subject sequence against
    /// what it has proposed and, after a leader change, against everything its log holds
    /// (nats-server #6194, #6485): before it, two leaders' batches can both be stored after the
    /// same one, and Kindling refuses one of them (`ReplicatedLog`, `LogChain`).
    static let exactFencing = NATSServerVersion(major: 2, minor: 11, patch: 0)
    /// Versions that lost acknowledged writes to process crashes (Jepsen's 2025 NATS analysis).
    static let crashDataLoss = NATSServerVersion(major: 2, minor: 10, patch: 20)...NATSServerVersion(major: 2, minor: 10, patch: 22)

    /// What is wrong with this version for Kindling, in words for a log line; empty when
    /// nothing is known to be.
    var concerns: [String] {
        var concerns: [String] = []
        if Self.crashDataLoss.contains(self) {
            concerns.append("nats-server 2.10.20-2.10.22 lost acknowledged writes to crashes (Jepsen, 2025): upgrade")
        }
        if self < Self.exactFencing {
            concerns.append(
                "nats-server before 2.11 can store two leaders' batches after the same one across a NATS leader change; Kindling voids the second and makes its writes again, but 2.11 or later refuses it at once"
            )
        }
        return concerns
    }
}
