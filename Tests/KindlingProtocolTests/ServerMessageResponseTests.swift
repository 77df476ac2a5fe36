import KindlingCore
import Testing

@testable import KindlingProtocol

/// Responses are written byte by byte without a JSON writer: they must spell exactly what the
/// writer would, for every number a request may carry and every status.
struct ServerMessageResponseTests {
    static let statuses: [WireStatus] = [
        .ok, .dataStale, .permissionDenied, .invalidToken, .expiredToken, .tooBig, .unavailable, .invalidPath, .invalidData, .invalidQuery,
        .unknownAction,
    ]

    @Test(arguments: [0, 1, 9, 10, 99, 100, 12_345, 999_999_999_999_999, -1, -42, Int.max, Int.min])
    func responsesSpellNumbersAsStringDoes(number: Int) {
        for status in Self.statuses {
            var writer = JSONWriter()
            writer.write(status.rawValue)
            let expected = #"{"t":"d","d":{"r":\#(number),"b":{"s":\#(String(decoding: writer.bytes, as: UTF8.self)),"d":{}}}}"#
            #expect(String(decoding: ServerMessage.response(number, status: status), as: UTF8.self) == expected)
        }
    }

    @Test func responsesCarryTheirDataAsGiven() {
        let data = Array(#"{"a":[1,"é"]}"#.utf8)
        #expect(
            String(decoding: ServerMessage.response(5, status: .ok, data: data), as: UTF8.self)
                == #"{"t":"d","d":{"r":5,"b":{"s":"ok","d":{"a":[1,"é"]}}}}"#)
    }
}
