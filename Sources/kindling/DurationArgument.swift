/// A span of time on the command line: a whole number with a unit, `s`, `m`, `h` or `d`
/// (`90m`, `24h`, `7d`); a bare number is seconds.
enum DurationArgument {
    /// The duration `text` names, nil when it is not one (or is too long to count).
    static func parse(_ text: String) -> Duration? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text)
        var scale: Int64 = 1
        if let last = text.last, let unit = units[last] {
            digits = digits.dropLast()
            scale = unit
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int64(digits), number >= 0 else { return nil }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow ? nil : .seconds(seconds)
    }
}
