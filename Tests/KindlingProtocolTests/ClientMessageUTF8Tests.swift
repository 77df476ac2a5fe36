import KindlingCore
import Testing

@testable import KindlingProtocol

/// The server decodes messages straight from a frame's bytes (`decode(utf8:)`): what it accepts
/// and refuses, and how, must be what decoding the same text as a `String` gives, and bytes that
/// are not UTF-8 must never get through.
struct ClientMessageUTF8Tests {
    static func fromBytes(_ bytes: [UInt8]) -> Result<ClientMessage, ProtocolError> {
        bytes.withUnsafeBufferPointer { buffer in Result { () throws(ProtocolError) in try ClientMessage.decode(utf8: buffer) } }
    }

    /// The general decoder alone (the whole message parsed as JSON), without the compact reader.
    static func parsingEnvelope(_ bytes: [UInt8]) -> Result<ClientMessage, ProtocolError> {
        bytes.withUnsafeBufferPointer { buffer in Result { () throws(ProtocolError) in try ClientMessage.decodeParsingEnvelope(buffer) } }
    }

    static func fromString(_ text: String) -> Result<ClientMessage, ProtocolError> {
        Result { () throws(ProtocolError) in try ClientMessage.decode(text) }
    }

    static func put(_ body: String) -> [UInt8] { Array(#"{"t":"d","d":{"r":5,"a":"p","b":"#.utf8) + Array(body.utf8) + Array("}}".utf8) }

    @Test(arguments: [
        #"{"p":"/writes/w1","d":42}"#,
        #"{"p":"/caf\u00e9/😀/e\u0301","d":{"ключ":"значение","\ud83d\ude00":[1,2.5,-0,1e-400]}}"#,
        #"{"p":"/a","d":{"esc":"\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac\ud834\udd1e"}}"#,
        #"{"p":"/a","d":123456789012345678901234567890}"#,
        #"{"p":"/a","d":1e400}"#,
        #"{"p":"/a","d":0.1,"d":"last wins"}"#,
        #"{"p":"/a.b","d":1}"#,
        #"{"p":"/ü/.priority","d":3}"#,
        #"{"p":"/a","d":"\ud800"}"#,
        #"{"p":"/a","d":"\u12"}"#,
        #"{"p":"/a","d":"tab\#tinside"}"#,
        #"{"p":"/a","d":01}"#,
        #"{"p":"/a","d":[1,]}"#,
        #"{"p":"/a","d":tru}"#,
        #" {"p":"/a","d":null} "#,
    ])
    func bytesDecodeAsTheString(body: String) {
        let bytes = ClientMessageUTF8Tests.put(body)
        let decoded = ClientMessageUTF8Tests.fromBytes(bytes)
        #expect(decoded == ClientMessageUTF8Tests.fromString(String(decoding: bytes, as: UTF8.self)))
        #expect(decoded == ClientMessageUTF8Tests.parsingEnvelope(bytes))
    }

    @Test func deepNestingIsRefusedAlike() {
        for depth in [JSONParser.maxNesting - 3, JSONParser.maxNesting - 2, JSONParser.maxNesting + 5] {
            let value = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let bytes = ClientMessageUTF8Tests.put(#"{"p":"/a","d":\#(value)}"#)
            let decoded = ClientMessageUTF8Tests.fromBytes(bytes)
            #expect(decoded == ClientMessageUTF8Tests.fromString(String(decoding: bytes, as: UTF8.self)))
            #expect(decoded == ClientMessageUTF8Tests.parsingEnvelope(bytes))
            #expect((try? decoded.get()) != nil || depth > JSONParser.maxNesting - 3)
        }
    }

    /// Byte sequences that are not UTF-8 (stray continuation, overlong, surrogate, past U+10FFFF,
    /// truncated) in a value, a member name, the path and outside strings: all refused as not JSON.
    @Test(
        arguments: [[0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xFF]] as [[UInt8]])
    func invalidUTF8IsRefused(sequence: [UInt8]) {
        let places: [[UInt8]] = [
            Array(#"{"p":"/a","d":"x"#.utf8) + sequence + Array(#"y"}"#.utf8),
            Array(#"{"p":"/a","d":"\n"#.utf8) + sequence + Array(#""}"#.utf8),
            Array(#"{"p":"/a","d":{""#.utf8) + sequence + Array(#"":1}}"#.utf8),
            Array(#"{"p":"/"#.utf8) + sequence + Array(#"","d":1}"#.utf8),
            Array(#"{"p":"/a","d":1"#.utf8) + sequence + Array("}".utf8),
        ]
        for body in places {
            let bytes = Array(#"{"t":"d","d":{"r":5,"a":"p","b":"#.utf8) + body + Array("}}".utf8)
            #expect(ClientMessageUTF8Tests.fromBytes(bytes) == ClientMessageUTF8Tests.parsingEnvelope(bytes))
            guard case .failure(let error) = ClientMessageUTF8Tests.fromBytes(bytes) else {
                Issue.record("accepted invalid UTF-8 \(sequence)")
                continue
            }
            #expect(error.kind == .malformedMessage)
            #expect(error.message.hasPrefix("Message is not JSON"))
        }
    }

    @Test func frameBytesAreAssembledAsStrings() throws {
        // Three pieces at most (one per 16,384 units, plus one).
        var assembler = FrameAssembler(maxMessageBytes: 40_000)
        func take(_ text: String) throws(ProtocolError) -> FrameAssembler.BytesResult {
            var text = text
            let result = text.withUTF8 { bytes in
                Result { () throws(ProtocolError) in try assembler.receive(utf8: UnsafeRawBufferPointer(bytes)) }
            }
            return try result.get()
        }
        #expect(try take("0") == .nothing)
        #expect(try take(#"{"t":"c"}"#) == .thisFrame)
        #expect(try take("3") == .nothing)
        #expect(try take("12") == .nothing)
        #expect(try take("ü") == .nothing)
        #expect(assembler.bufferedBytes == 4)
        #expect(try take("{}") == .message("12ü{}"))
        #expect(assembler.bufferedBytes == 0)
        #expect(throws: ProtocolError.self) { try take(String(repeating: "x", count: 40_001)) }
        #expect(throws: ProtocolError.self) { try take("999999") }
        #expect(try take("1234567") == .thisFrame)
        #expect(try assembler.receive(String(repeating: "é", count: 20)) == .message(String(repeating: "é", count: 20)))
    }
}
