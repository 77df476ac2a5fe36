import KindlingCore
import Logging
import Synchronization
import Testing

@testable import KindlingServer

/// `--log-format json`: each log event is exactly one line holding one JSON object.
struct JSONLogHandlerTests {
    @Test func eachEventIsOneJSONObjectOnOneLine() throws {
        let lines = Mutex<[[UInt8]]>([])
        var handler = JSONLogHandler(label: "kindling") { bytes in lines.withLock { $0.append(bytes) } }
        handler.logLevel = .info
        handler[metadataKey: "namespace"] = "demo"
        let logger = Logger(label: "kindling") { _ in handler }
        logger.info("a \"quoted\"\nmessage", metadata: ["connection": "conn-7", "nested": ["list": ["a", "b"]]])
        logger.debug("below the level")
        let written = lines.withLock { $0 }
        try #require(written.count == 1)
        let line = written[0]
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false)
        let object = try JSONParser.parse(Array(line.dropLast()))
        #expect(object["level"]?.stringValue == "info")
        #expect(object["label"]?.stringValue == "kindling")
        #expect(object["message"]?.stringValue == "a \"quoted\"\nmessage")
        #expect(object["metadata"]?["namespace"]?.stringValue == "demo")
        #expect(object["metadata"]?["connection"]?.stringValue == "conn-7")
        #expect(object["metadata"]?["nested"]?["list"] == .array([.string("a"), .string("b")]))
        let time = try #require(object["time"]?.stringValue)
        // 2026-01-02T03:04:05.678Z
        #expect(time.count == 24 && time.hasSuffix("Z") && time.dropFirst(10).first == "T")
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"), (951_782_400_123, "2000-02-29T00:00:00.123Z"), (1_767_323_045_678, "2026-01-02T03:04:05.678Z"),
        (4_107_542_399_999, "2100-02-28T23:59:59.999Z"), (-1, "1969-12-31T23:59:59.999Z"),
    ])
    func timestampsAreRFC3339InUTC(milliseconds: Int64, text: String) {
        #expect(JSONLogHandler.timestamp(millisecondsSinceEpoch: milliseconds) == text)
    }
}
