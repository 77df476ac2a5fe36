import Testing

@testable import KindlingCore

/// The one check of "an integer every JSON reader takes exactly": whole, and below 2^53 in size.
struct DoubleExactJSONIntegerTests {
    @Test(
        arguments: [
            (0.0, 0), (-0.0, 0), (1.0, 1), (-42.0, -42), (9_007_199_254_740_991.0, 9_007_199_254_740_991),
            (-9_007_199_254_740_991.0, -9_007_199_254_740_991),
        ] as [(Double, Int64)])
    func wholeNumbersBelowTwoToThe53AreTheirInteger(value: Double, integer: Int64) {
        #expect(value.exactJSONInteger == integer)
    }

    @Test(arguments: [
        0.5, -1.5, 9_007_199_254_740_992.0, -9_007_199_254_740_992.0, 1e300, -1e300, .infinity, -.infinity, .nan,
        .leastNonzeroMagnitude,
    ])
    func fractionsAndNumbersFromTwoToThe53OnAreNot(value: Double) {
        #expect(value.exactJSONInteger == nil)
    }
}
