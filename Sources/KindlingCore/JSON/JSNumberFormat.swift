/// JavaScript's `Number.prototype.toString` for finite doubles: the shortest digits that read
/// back to the same double, laid out with JavaScript's thresholds (plain notation from 1e-6 up to
/// 1e21, exponent notation outside). Negative zero is written `-0`.
///
/// Clients hash what they receive, so the text has to read back to exactly the stored double;
/// using the same layout as JavaScript also keeps our output identical to what a JS client would
/// write for the same value.
public enum JSNumberFormat {
    /// Appends the text of `value` to `bytes`.
    public static func append(_ value: Double, to bytes: inout [UInt8]) {
        if value == 0 {
            bytes.append(contentsOf: (value.sign == .minus ? "-0" : "0").utf8)
            return
        }
        if let integer = value.exactJSONInteger {
            bytes.append(contentsOf: String(integer).utf8)
            return
        }
        let (negative, digits, pointPosition) = shortestDigits(value)
        if negative { bytes.append(UInt8(ascii: "-")) }
        layOut(digits: digits, pointPosition: pointPosition, into: &bytes)
    }

    /// The text of `value`.
    public static func string(_ value: Double) -> String {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Lays out digits `d1 d2 ... dk` whose value is `0.d1d2...dk × 10^pointPosition`.
    static func layOut(digits: [UInt8], pointPosition n: Int, into bytes: inout [UInt8]) {
        let k = digits.count
        let zero = UInt8(ascii: "0")
        if k <= n && n <= 21 {
            bytes.append(contentsOf: digits)
            bytes.append(contentsOf: repeatElement(zero, count: n - k))
        } else if 0 < n && n <= 21 {
            bytes.append(contentsOf: digits[..<n])
            bytes.append(UInt8(ascii: "."))
            bytes.append(contentsOf: digits[n...])
        } else if -6 < n && n <= 0 {
            bytes.append(contentsOf: [zero, UInt8(ascii: ".")])
            bytes.append(contentsOf: repeatElement(zero, count: -n))
            bytes.append(contentsOf: digits)
        } else {
            bytes.append(digits[0])
            if k > 1 {
                bytes.append(UInt8(ascii: "."))
                bytes.append(contentsOf: digits[1...])
            }
            bytes.append(UInt8(ascii: "e"))
            let exponent = n - 1
            bytes.append(exponent < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            bytes.append(contentsOf: String(abs(exponent)).utf8)
        }
    }

    /// The shortest round-trip digits of a finite non-zero double, read from Swift's own shortest
    /// representation (`1.5e+300`, `0.001`, `123.0`).
    static func shortestDigits(_ value: Double) -> (negative: Bool, digits: [UInt8], pointPosition: Int) {
        var text = Array(value.description.utf8)
        var negative = false
        if text.first == UInt8(ascii: "-") {
            negative = true
            text.removeFirst()
        }
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            exponent = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) ?? 0
            text.removeSubrange(e...)
        }
        var digits: [UInt8] = []
        var integerDigits = 0
        var seenPoint = false
        for byte in text {
            if byte == UInt8(ascii: ".") {
                seenPoint = true
                continue
            }
            digits.append(byte)
            if !seenPoint { integerDigits += 1 }
        }
        var pointPosition = integerDigits + exponent
        while digits.count > 1, digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            pointPosition -= 1
        }
        while digits.count > 1, digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return (negative, digits, pointPosition)
    }
}
