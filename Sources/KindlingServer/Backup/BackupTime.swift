/// A backup's instant as the text in its file names: UTC, ISO 8601's basic form with
/// milliseconds (`20240501T120000.123Z`), computed with the proleptic Gregorian calendar's
/// day arithmetic, so formatting needs no locale, time zone or formatter state.
enum BackupTime {
    static let millisecondsPerDay: Int64 = 86_400_000
    /// Years of four digits only, so every name has the same length and names sort as times do.
    static let earliest: Int64 = 0
    static let latest: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999Z

    /// The text of `milliseconds` since the Unix epoch, clamped to years 1970 to 9999.
    static func text(_ milliseconds: Int64) -> String {
        let clamped = min(max(milliseconds, earliest), latest)
        let days = clamped / millisecondsPerDay
        let within = clamped % millisecondsPerDay
        let (year, month, day) = CivilDate.civil(days: days)
        let seconds = within / 1000
        return pad(year, 4) + pad(month, 2) + pad(day, 2) + "T" + pad(seconds / 3600, 2) + pad(seconds / 60 % 60, 2) + pad(seconds % 60, 2)
            + "." + pad(within % 1000, 3) + "Z"
    }

    /// The milliseconds a name's time stands for; nil unless it is exactly that form.
    static func parse(_ text: Substring) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "."), bytes[19] == UInt8(ascii: "Z") else {
            return nil
        }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                // At most four digits: no overflow.
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
            let minute = number(11..<13), let second = number(13..<15), let milliseconds = number(16..<19),
            year >= 1970, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = CivilDate.daysSinceEpoch(year: year, month: month, day: day)
        return days * millisecondsPerDay + ((hour * 60 + minute) * 60 + second) * 1000 + milliseconds
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
