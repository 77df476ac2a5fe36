import KindlingCore
import Testing

/// `JSONValueCount` counts exactly the values of a JSON text plus one for each empty array (so
/// never fewer than the text holds), however the text is cut into pieces.
struct JSONValueCountTests {
    private static func values(in json: JSONValue) -> Int {
        switch json {
        case .array(let elements): 1 + elements.reduce(0) { $0 + values(in: $1) }
        case .object(let members): 1 + members.reduce(0) { $0 + values(in: $1.value) }
        default: 1
        }
    }

    /// What the count adds to the values: an empty array's `[`.
    private static func extra(in json: JSONValue) -> Int {
        switch json {
        case .array(let elements): (elements.isEmpty ? 1 : 0) + elements.reduce(0) { $0 + extra(in: $1) }
        case .object(let members): members.reduce(0) { $0 + extra(in: $1.value) }
        default: 0
        }
    }

    /// Strings full of the characters that count outside them, and of escapes.
    private static let awkward = [#"a:b"#, #"[,]"#, #"q\"uote"#, #"back\\"#, #"\\\"[:,"#, "", "é:ü", #"\u005b"#]

    private static func random(depth: Int, _ generator: inout SeededGenerator) -> JSONValue {
        let pick = Int.random(in: 0..<(depth > 3 ? 4 : 7), using: &generator)
        switch pick {
        case 0: return .null
        case 1: return .number(Double(Int.random(in: -1000...1000, using: &generator)))
        case 2, 3: return .string(awkward.randomElement(using: &generator)!)
        case 4: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in random(depth: depth + 1, &generator) })
        default:
            let count = Int.random(in: 0...4, using: &generator)
            return .object(
                (0..<count).map { index in JSONMember(awkward.randomElement(using: &generator)! + "\(index)", random(depth: depth + 1, &generator)) })
        }
    }

    private static func count(_ bytes: [UInt8], cutAt cuts: [Int]) -> Int {
        var counter = JSONValueCount()
        var start = 0
        for cut in cuts + [bytes.count] where cut >= start {
            bytes[start..<cut].withUnsafeBytes { counter.add($0) }
            start = cut
        }
        return counter.upperBound
    }

    @Test func boundsTheValuesOfRandomTextCutAnywhere() throws {
        var generator = SeededGenerator(seed: 16)
        for _ in 0..<400 {
            let json = Self.random(depth: 0, &generator)
            let bytes = Array(JSONWriter.string(json).utf8)
            #expect(try JSONParser.parse(bytes) == json)
            let whole = Self.count(bytes, cutAt: [])
            #expect(whole == Self.values(in: json) + Self.extra(in: json), "\(JSONWriter.string(json)): \(whole)")
            for cut in 0...bytes.count {
                #expect(Self.count(bytes, cutAt: [cut]) == whole)
            }
            let pieces = (0..<5).map { _ in Int.random(in: 0...bytes.count, using: &generator) }.sorted()
            #expect(Self.count(bytes, cutAt: pieces) == whole)
        }
    }

    @Test func countsWhatItIsGiven() {
        #expect(Self.count([], cutAt: []) == 0)
        #expect(Self.count(Array("7".utf8), cutAt: []) == 1)
        #expect(Self.count(Array(#"{"a":1,"b":[1,2]}"#.utf8), cutAt: []) == 5)
        #expect(Self.count(Array(#""a:b,[c\"d:""#.utf8), cutAt: [4, 9]) == 1)
        #expect(Self.count(Array(" [ ] ".utf8), cutAt: [2]) == 2)
        #expect(Self.count(Array(#"{"k0":[],"k1":[],"k2":[]}"#.utf8), cutAt: []) == 7)
        // Objects in arrays in objects: only the arrays' commas count.
        #expect(Self.count(Array(#"[{"a":1,"b":2},{"c":[3,4]}]"#.utf8), cutAt: [3, 12]) == 8)
        // Below the 128 levels kept, every comma counts: never short of the values.
        let deep = String(repeating: "{\"k\":", count: 130) + #"{"a":1,"b":2}"# + String(repeating: "}", count: 130)
        #expect(Self.count(Array(deep.utf8), cutAt: []) == 1 + 130 + 2 + 1)
    }
}
