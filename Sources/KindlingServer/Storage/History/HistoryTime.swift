import Foundation

/// Instants as history takes them: milliseconds since 1970, or ISO 8601 text.
public enum HistoryTime {
    /// Parses `text`: digits are milliseconds since 1970; otherwise ISO 8601 with a time zone
    /// (`2026-12-05T10:00:00Z`, fractional seconds allowed). Nil when it is neither.
    public static func parse(_ text: String) -> Int64? {
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) { return Int64(text) }
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime]] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded(.down)) }
        }
        return nil
    }

    /// `milliseconds` as ISO 8601 in UTC, with milliseconds.
    public static func iso8601(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// Now, in milliseconds since 1970.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}
