extension Double {
    /// This number as an integer when it is whole and smaller in size than 2^53; nil for a
    /// fraction, anything from 2^53 up, infinities and NaN.
    ///
    /// JSON numbers are doubles to every SDK (JavaScript's included), and below 2^53 every
    /// integer has a double of its own; from there on neighbours share one (2^53 + 1 reads as
    /// 2^53). So only these integers mean exactly one value to every reader. The one check for
    /// the places that need that: a server clock, a rules test's `now`, a number read back from
    /// a server's envelope, and writing a number in integer form. (Request numbers and tags take
    /// 15 digits at most: `Double.wireCounter`.)
    public var exactJSONInteger: Int64? {
        guard abs(self) < 9_007_199_254_740_992, self == rounded() else { return nil }
        return Int64(self)
    }
}
