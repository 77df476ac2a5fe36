import Testing

@testable import KindlingClient

/// Big objects: coding time grows with the size, not its square.
struct JSONValueCodableScaleTests {
    @Test func aDictionaryOfManyChildrenRoundTripsInLinearTime() throws {
        struct Post: Codable, Equatable { var n: Int }
        let keys = (0..<20_000).map { "p\($0)" }
        let posts = Dictionary(uniqueKeysWithValues: keys.map { ($0, Post(n: $0.count)) })
        let clock = ContinuousClock()
        var json: JSONValue = nil
        let elapsed = try clock.measure {
            json = try JSONValueEncoder().encode(posts)
            #expect(try JSONValueDecoder().decode([String: Post].self, from: json) == posts)
        }
        guard case .object(let members) = json else {
            Issue.record("not an object")
            return
        }
        #expect(members.count == 20_000)
        // About 0.2 s in a debug build; a linear search per key would be 2·10^8 key comparisons.
        #expect(elapsed < .seconds(20), "\(elapsed)")
    }
}
