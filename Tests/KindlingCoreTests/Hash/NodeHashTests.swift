import Testing

@testable import KindlingCore

/// The worked vectors of firebase-wire-protocol.md §7, each computed by the SDKs' algorithm.
struct NodeHashTests {
    func hash(_ json: String) throws -> String { try Node(jsonText: json).hash }

    @Test(arguments: [
        ("\"hello\"", "z6sRbrNLwbHX5fdjpvsTtWgXUFc="),
        ("5", "w28swksk9+tXf5jEdS9R5oSFAv8="),
        ("5.0", "w28swksk9+tXf5jEdS9R5oSFAv8="),
        ("0.1", "wtQjBi5TBE+ZcdekL6INiSeCSQI="),
        ("false", "aSSNoqcS4oQwJ2xxH20rvpp3zP0="),
        ("10", "+r5aI9HvKKagELki8SYKBk0q7D4="),
        ("{\".value\":\"a\",\".priority\":\"a\"}", "8Hsgk0ttgx6qecOHYC9uHvF3YNk="),
        ("{\"b\":true,\"a\":1,\"10\":\"x\",\"9\":\"y\"}", "hU7a4n1rxDcjFL5L6K2qzoqoW0E="),
        (
            "{\"x\":{\".value\":1,\".priority\":2},\"y\":{\".value\":2,\".priority\":1},\"z\":3,\"w\":{\"k\":\"v\",\".priority\":\"s\"}}",
            "vzw7DA0ddwCKZZvqmT9R8G/YD9w="
        ),
        ("{\"msg\":{\"text\":\"hi ✓\",\"n\":-2.5},\".priority\":10}", "ogBX7I+QEHqsdwlTdrXDE03lY7c="),
        ("{\"a\":{\".value\":\"a\",\".priority\":\"b\"},\"b\":{\".value\":\"b\",\".priority\":\"a\"}}", "LZFx+aWeRPRKNrxOHsvtL1Txf+s="),
        // Vectors from running the JS SDK's own hash code.
        ("\"a\"", "eMfSk0nU+CieTkCbO5r7cKNp7qU="),
        ("\"\"", "Ki0Xy0V6morg0TO3Sxi/jwugYDQ="),
        ("1", "YPVfR2bXt/lcDjiQZ8pOkAd3qkQ="),
        ("0", "7ysMph9WPitGP7poMnMHMVPtUlI="),
        ("-0", "m/gA365Q5OBo06Bg8wdybAAiMSQ="),
        ("1.5", "4MftviR9Z/2MQCMkjh2RNbvlLJc="),
        ("true", "E5z61QM0lN/U2WsOnusszCTkR8M="),
        ("{\".value\":1,\".priority\":2}", "FvGzv2x5RbRTIc6uhMwY3pMW2oU="),
        ("{\".value\":\"x\",\".priority\":\"p\"}", "Ee+tTXV5cvjTnBMuKXMyU8fA5VY="),
        ("{\"a\":1}", "gIphxiFGusLh2VwSNVKSvNu90m4="),
        ("{\"a\":1,\"b\":\"x\"}", "jRI9dwRS9sb4SWm8uuoN7+xBk4g="),
        ("{\"a\":{\".value\":1,\".priority\":5},\"b\":{\".value\":2,\".priority\":1}}", "20dPr29IbUaofvOO7WFTLLX2z6s="),
        ("{\".priority\":1,\"a\":1}", "9fOzg9w0PJT6UBOo2FtrMq79FGQ="),
        ("[1,2,3]", "h6XOC3OcidJlNC1Velmi3gphgQk="),
    ])
    func documentedVectors(json: String, expected: String) throws {
        #expect(try hash(json) == expected)
    }

    @Test func childPreimagesOfThePriorityVector() throws {
        var text: [UInt8] = []
        let y = try Node(jsonText: "{\".value\":2,\".priority\":1}")
        NodeHashText.appendLeaf(y.leaf!, priority: y.priority, variant: .canonical, to: &text)
        #expect(String(decoding: text, as: UTF8.self) == "priority:number:3ff0000000000000:number:4000000000000000")
        text = []
        let w = try Node(jsonText: "{\"k\":\"v\",\".priority\":\"s\"}")
        NodeHashText.appendChildren(w.children, priority: w.priority, variant: .canonical, to: &text)
        #expect(String(decoding: text, as: UTF8.self) == "priority:string:s::k:D5rSAbpyt4sr3fGLyUovKfs5ocM=")
    }

    @Test func emptyValuesHashToTheEmptyString() throws {
        for json in ["null", "{}", "{\"a\":null}", "[]", "{\"a\":{}}"] {
            #expect(try hash(json) == "")
        }
    }

    @Test func negativeZeroKeepsItsSignBit() throws {
        var text: [UInt8] = []
        NodeHashText.appendValue(.number(-0.0), variant: .canonical, to: &text)
        #expect(String(decoding: text, as: UTF8.self) == "number:8000000000000000")
    }

    @Test func largeIntegersHashAsTheirNearestDouble() throws {
        #expect(try hash("12345678901234567") == hash("12345678901234568"))
    }

    @Test func javaScriptNumberQuirk() throws {
        #expect(JSDoubleEncoding.bits(281_474_976_710_655) == 0x42ff_ffff_ffff_fff0)
        #expect((281_474_976_710_655 as Double).bitPattern == 0x42ef_ffff_ffff_ffe0)
        #expect(JSDoubleEncoding.bits(7.999999999999999) == 0x4020_0000_0000_0000)
        #expect(JSDoubleEncoding.bits(9_007_199_254_740_991) == 0x4340_0000_0000_0000)
        #expect(JSDoubleEncoding.bits(3.9999999999999996) == 0x4010_0000_0000_0000)
        #expect(JSDoubleEncoding.bits(1e21) == 0x444b_1ae4_d6e2_ef50)
        #expect(JSDoubleEncoding.bits(5e-324) == 1)
        let node = Node(.number(281_474_976_710_655))
        // The hashes the JS client and the server produced in the verified run (§7.4).
        #expect(node.hash == "6+qUJVTNnLle4vjSTXZoA5mieF0=")
        #expect(node.hash(.javaScript) == "+PixydV3ccxyGQt0vSJ/xUMm7VM=")
        #expect(node.matchesHash("+PixydV3ccxyGQt0vSJ/xUMm7VM="))
        #expect(node.matchesHash("6+qUJVTNnLle4vjSTXZoA5mieF0="))
    }

    @Test func javaScriptBitsAreExactForOrdinaryNumbers() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<20_000 {
            let value = Double(Int64.random(in: -1_000_000_000...1_000_000_000, using: &generator)) / 1000
            #expect(JSDoubleEncoding.bits(value) == value.bitPattern)
        }
        for value in [1.0, 0.5, 2.5, -2.5, 1e300, -1e-200, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308] {
            #expect(JSDoubleEncoding.bits(value) == value.bitPattern, "\(value)")
        }
    }

    @Test func javaScriptLosesTheFractionOfTinyNormals() {
        // 2^(52 - exponent) overflows to infinity below about 2^-971, and JS then emits a zero fraction.
        #expect(JSDoubleEncoding.bits(-1e-300) == (-1e-300 as Double).bitPattern & ~((1 << 52) - 1))
    }

    @Test func iOSChildOrderVariant() throws {
        let node = try Node(jsonText: "{\"a\":{\".value\":\"a\",\".priority\":\"b\"},\"b\":{\".value\":\"b\",\".priority\":\"a\"}}")
        #expect(node.hash(.iOS) == "eg8/8RP+HYl8/NC4nA836MmfT3g=")
        #expect(node.matchesHash("eg8/8RP+HYl8/NC4nA836MmfT3g="))
        #expect(node.matchesHash("LZFx+aWeRPRKNrxOHsvtL1Txf+s="))
        #expect(!node.matchesHash("z6sRbrNLwbHX5fdjpvsTtWgXUFc="))
        #expect(!node.matchesHash(""))
        #expect(Node.empty.matchesHash(""))
    }

    @Test func variantsAgreeWhereNothingDiffers() throws {
        let node = try Node(jsonText: "{\"a\":1,\"b\":{\"c\":\"x\",\".priority\":3}}")
        #expect(node.hash(.javaScript) == node.hash)
        #expect(node.hash(.iOS) == node.hash)
    }

    @Test func cachedHashFollowsWrites() throws {
        var node = try Node(jsonText: "{\"a\":{\"b\":1,\"c\":2},\"d\":3}")
        let before = node.hash
        let snapshot = node
        node.set(Node(.number(5)), at: try Path("a/b"))
        let expected = try Node(jsonText: "{\"a\":{\"b\":5,\"c\":2},\"d\":3}").hash
        #expect(node.hash == expected)
        #expect(snapshot.hash == before)
        node.set(Node(.number(1)), at: try Path("a/b"))
        #expect(node.hash == before)
    }

    /// The hash cache is filled without a lock, first store wins: many threads hashing one shared
    /// tree at once all get the digest a fresh tree gives, and a later write still forgets it.
    @Test func concurrentHashingOfASharedTreeAgrees() async throws {
        let json = "{" + (0..<200).map { "\"u\($0)\":{\"name\":\"User number \($0)\",\"score\":\($0)}" }.joined(separator: ",") + "}"
        let expected = try Node(jsonText: json).hash
        for _ in 0..<20 {
            let shared = try Node(jsonText: json)
            let digests = await withTaskGroup(of: String.self) { group in
                for _ in 0..<8 { group.addTask { shared.hash } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(digests.allSatisfy { $0 == expected })
            var changed = shared
            changed.set(Node(.number(-1)), at: try Path("u7/score"))
            #expect(changed.hash != expected)
            #expect(shared.hash == expected)
        }
    }
}
