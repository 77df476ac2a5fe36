import KindlingCore
import Testing

@testable import KindlingProtocol

/// The compact-envelope reader answers only when it agrees with the general decoder: checked on
/// the SDKs' messages and on thousands of mutations of them (bytes replaced, dropped, inserted).
struct CompactRequestEnvelopeTests {
    static let messages = [
        #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/writes/w12","d":42}}}"#,
        #"{"t":"d","d":{"r":23,"a":"m","b":{"p":"/users/ü","d":{"a/b":1.5e3,"c":null}}}}"#,
        #"{"t":"d","d":{"r":7,"a":"p","b":{"p":"/a","d":{".sv":"timestamp"},"h":"abc="}}}"#,
        #"{"t":"d","d":{"r":4,"a":"q","b":{"p":"/t5","q":{"l":2,"vf":"r","i":"score"},"t":1,"h":""}}}"#,
        #"{"t":"d","d":{"r":0,"a":"g","b":{"p":"/x","q":{}}}}"#,
        #"{"t":"d","d":{"r":999999999999999,"a":"s","b":{"c":{"sdk.js.12-0-0":1}}}}"#,
        #"{"t":"d","d":{"r":3,"a":"gauth","b":{"cred":"owner"}}}"#,
        #"{"t":"d","d":{"r":3,"a":"weird","b":{}}}"#,
        #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/caf\u00e9","d":"\ud83d\ude00 \"q\""}}}"#,
        #"{"t":"d","d":{"r":2,"a":"p","b":{"p":"writes/w1","d":{"ts":17,"seq":2,"pad":"xx"}}}}"#,
        #"{"t":"d","d":{"r":8,"a":"p","b":{"p":"/a/b/c","d":null}}}"#,
        #"{"t":"d","d":{"r":9,"a":"p","b":{"p":"/","d":[1,{"x":true},"s"]}}}"#,
    ]

    static func compact(_ bytes: [UInt8]) -> Request? {
        bytes.withUnsafeBufferPointer { CompactRequestEnvelope.decode($0) }
    }

    static func general(_ bytes: [UInt8]) -> Result<ClientMessage, ProtocolError> {
        bytes.withUnsafeBufferPointer { buffer in Result { () throws(ProtocolError) in try ClientMessage.decodeParsingEnvelope(buffer) } }
    }

    static func decoded(_ bytes: [UInt8]) -> Result<ClientMessage, ProtocolError> {
        bytes.withUnsafeBufferPointer { buffer in Result { () throws(ProtocolError) in try ClientMessage.decode(utf8: buffer) } }
    }

    @Test(arguments: messages)
    func sdkMessagesTakeTheCompactPath(message: String) throws {
        let bytes = Array(message.utf8)
        let request = try #require(CompactRequestEnvelopeTests.compact(bytes))
        #expect(CompactRequestEnvelopeTests.general(bytes) == .success(.request(request)))
    }

    @Test(arguments: [
        #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a.b","d":1}}}"#,
        #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1}}} "#,
        #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1},"r":2}}"#,
        #"{"t":"d","d":{"r":1.0,"a":"p","b":{"p":"/a","d":1}}}"#,
        #"{"t":"d","d":{"r":01,"a":"p","b":{"p":"/a","d":1}}}"#,
        #"{"t":"d","d":{"r":1000000000000000,"a":"p","b":{"p":"/a","d":1}}}"#,
        #"{"t":"d","d":{"r":1,"a":"\u0070","b":{"p":"/a","d":1}}}"#,
        #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":1}},"t":"c"}"#,
        #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":[1,}}}"#,
    ])
    func otherShapesAreLeftToTheGeneralDecoder(message: String) {
        #expect(CompactRequestEnvelopeTests.compact(Array(message.utf8)) == nil)
    }

    /// A put's value read where it lies counts the same nesting as a whole parse: the deepest
    /// value allowed is taken, one level more is refused, by both readers alike.
    @Test func aPutsValueHasTheWholeTextsNestingCap() throws {
        for extra in [-1, 0, 1] {
            // The envelope, its data and the body are three levels.
            let levels = JSONParser.maxNesting - 3 + extra
            let value = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
            let bytes = Array(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/deep","d":\#(value)}}}"#.utf8)
            let general = CompactRequestEnvelopeTests.general(bytes)
            if let request = CompactRequestEnvelopeTests.compact(bytes) {
                #expect(general == .success(.request(request)))
            }
            #expect(CompactRequestEnvelopeTests.decoded(bytes) == general)
            if extra <= 0 {
                #expect(CompactRequestEnvelopeTests.compact(bytes) != nil)
            } else {
                #expect(CompactRequestEnvelopeTests.compact(bytes) == nil)
            }
        }
    }

    @Test func mutationsAgreeWithTheGeneralDecoder() {
        let alphabet = Array(#"{}[]":, 0159-.eapdrtbh\"#.utf8) + [0xC3, 0xA9, 0x80, 0xFF]
        var random = SeededGenerator(seed: 16)
        var compactAnswers = 0
        for _ in 0..<20_000 {
            var bytes = Array(CompactRequestEnvelopeTests.messages.randomElement(using: &random)!.utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                }
            }
            let general = CompactRequestEnvelopeTests.general(bytes)
            if let request = CompactRequestEnvelopeTests.compact(bytes) {
                compactAnswers += 1
                #expect(general == .success(.request(request)), "\(String(decoding: bytes, as: UTF8.self))")
            }
            #expect(CompactRequestEnvelopeTests.decoded(bytes) == general)
        }
        // Mutations inside the body keep the compact shape: the comparison above was exercised.
        #expect(compactAnswers > 1_000)
    }
}
