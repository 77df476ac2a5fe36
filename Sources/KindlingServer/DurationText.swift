/// A span of time as the command line takes it (`--backup-every`, `--history`): a whole number
/// and a unit, `s`, `m`, `h` or `d` (`90s`, `30m`, `24h`, `7d`).
public enum DurationText {
    /// The span `text` names; nil for anything else. Bounds are the caller's.
    public static func parse(_ text: String) -> Duration? {
        guard let unit = text.last, text.count >= 2, text.count <= 12 else { return nil }
        let seconds: Int64
        switch unit {
        case "s": seconds = 1
        case "m": seconds = 60
        case "h": seconds = 3600
        case "d": seconds = 86_400
        default: return nil
        }
        let digits = text.dropLast()
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(digits) else { return nil }
        let (total, overflow) = count.multipliedReportingOverflow(by: seconds)
        return overflow ? nil : .seconds(total)
    }
}
