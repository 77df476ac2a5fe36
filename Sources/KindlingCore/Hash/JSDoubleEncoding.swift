#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The 64 bits the JS SDK's `doubleToIEEE754String` produces for a double.
///
/// JavaScript cannot read a double's bits, so the SDK rebuilds them arithmetically: the exponent
/// from `floor(log(v) / LN2)` and the fraction from `round(v · 2^(52−e) − 2^52)`. When the
/// logarithm rounds up to the next integer (values just below a power of two) the result is not
/// the real encoding. JS clients hash with these bits, so the server must be able to as well.
public enum JSDoubleEncoding {
    static let exponentBits = 11
    static let fractionBits = 52
    static let bias = 1023

    /// The JS SDK's bits for `value` (finite; NaN and infinities are never stored).
    public static func bits(_ value: Double) -> UInt64 {
        if value == 0 { return value.sign == .minus ? 1 << 63 : 0 }
        let sign: UInt64 = value < 0 ? 1 : 0
        let magnitude = abs(value)
        var exponent: Double
        var fraction: Double
        if magnitude >= power2(1 - bias) {
            let ln = min((log(magnitude) / 0.6931471805599453).rounded(.down), Double(bias))
            exponent = ln + Double(bias)
            fraction = jsRound(magnitude * power2(Int(Double(fractionBits) - ln)) - power2(fractionBits))
        } else {
            exponent = 0
            fraction = jsRound(magnitude / power2(1 - bias - fractionBits))
        }
        return sign << 63 | lowBits(exponent, count: exponentBits) << 52 | lowBits(fraction, count: fractionBits)
    }

    /// `Math.pow(2, n)`, infinite past the double range.
    static func power2(_ n: Int) -> Double {
        if n > 1023 { return .infinity }
        if n < -1074 { return 0 }
        return Double(sign: .plus, exponent: n, significand: 1)
    }

    /// `Math.round`: to the nearest integer, halves toward +∞.
    static func jsRound(_ x: Double) -> Double {
        guard x.isFinite else { return x }
        let floor = x.rounded(.down)
        return x - floor >= 0.5 ? floor + 1 : floor
    }

    /// The low `count` bits the SDK emits from an integral double by repeated `% 2` and
    /// `floor(/ 2)`: two's complement for negatives, all zeros for an infinite value.
    static func lowBits(_ x: Double, count: Int) -> UInt64 {
        guard x.isFinite else { return 0 }
        let mask: UInt64 = count == 64 ? ~0 : (1 << UInt64(count)) - 1
        let integer = Int64(exactly: x) ?? Int64(x.truncatingRemainder(dividingBy: 0x1p62))
        return UInt64(bitPattern: integer) & mask
    }
}
