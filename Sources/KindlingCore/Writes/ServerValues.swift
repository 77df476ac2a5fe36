/// What server values (`{".sv": …}`) resolve against at the moment a write is applied.
///
/// The core has no clock: the owner of the tree passes the commit time in, so a write resolves
/// the same way when it is replayed from a log.
public struct ServerValues: Sendable {
    /// The commit time, in milliseconds since the Unix epoch.
    public var timestamp: Double

    public init(timestamp: Double) { self.timestamp = timestamp }

    /// Resolves the body of a `.sv` placeholder: `"timestamp"`, or `{"increment": n}`, which adds
    /// `n` to the number now stored there and starts from 0 when there is no number.
    func resolve(_ json: JSONValue, existing: Leaf?, path: Path) throws(ValidationError) -> Leaf {
        if json.stringValue == "timestamp" { return .number(timestamp) }
        if case .object(let members) = json, members.count == 1, members[0].key == "increment",
            let delta = members[0].value.numberValue
        {
            if case .number(let current)? = existing {
                let sum = current + delta
                guard sum.isFinite else {
                    throw ValidationError(.invalidNumber, "Increment at \(path) overflows the double range")
                }
                return .number(sum)
            }
            return .number(delta)
        }
        throw ValidationError(
            .invalidServerValue,
            "Invalid server value at \(path): \(JSONWriter.string(json)) (expected \"timestamp\" or {\"increment\": number})"
        )
    }
}
