import Testing

@testable import KindlingCore

/// Window arithmetic never overflows, whatever count a limit holds, and both parsers refuse
/// counts above `QueryLimit.maxCount` alike.
struct QueryLimitTests {
    static let node = try! Node(
        json: .object([
            JSONMember("a", .number(1)), JSONMember("b", .number(2)), JSONMember("c", .number(3)),
        ]))

    @Test(arguments: [Int.max, Int.min, -1, 0, 1, 2, 3, 4])
    func windowsOfAnyCountStayInRange(count: Int) {
        for index in [Index.key, .value, .priority] {
            for fromEnd in [false, true] {
                let start = index == .key ? Node(.string("b")) : index == .value ? Node(.number(2)) : .empty
                let query = Query(index: index, start: QueryBound(value: start, name: .min), limit: QueryLimit(count: count, fromEnd: fromEnd))
                let window = query.window(of: Self.node)
                let expected = index == .priority ? 3 : 2
                #expect(window.count == min(max(0, count), expected), "\(index) \(count) \(fromEnd)")
                if index != .key {
                    let sorted = SortedIndex(index, over: Self.node)
                    #expect(sorted.window(query).map(\.key) == window.map(\.key))
                }
            }
        }
    }

    @Test func bothParsersRefuseTheSameLimits() throws {
        let rest = { (count: String) throws(ValidationError) -> Query in
            try Query(restParameters: ["orderBy": "\"$key\"", "limitToFirst": count])
        }
        let wire = { (count: Double) throws(ValidationError) -> Query in
            try Query(wire: .object([JSONMember("l", .number(count)), JSONMember("vf", .string("l"))]))
        }
        #expect(try rest("2147483647").limit?.count == QueryLimit.maxCount)
        #expect(try wire(2_147_483_647).limit?.count == QueryLimit.maxCount)
        for count in ["2147483648", "9223372036854775807", "99999999999999999999", "-1", "1.5", "abc"] {
            #expect(throws: ValidationError.self) { try rest(count) }
        }
        for count in [2_147_483_648, 9.3e18, -1, 1.5] {
            #expect(throws: ValidationError.self) { try wire(count) }
        }
    }
}
