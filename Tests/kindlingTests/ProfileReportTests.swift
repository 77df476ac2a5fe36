import Foundation
import KindlingCore
import Testing

@testable import kindling

/// `kindling profile`'s report from profiler records: the numbers, paths and tables laid out as
/// the Firebase CLI's `database:profile` lays them out, and the totals of the records given.
struct ProfileReportTests {
    static func record(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    @Test func numbersHaveTwoDecimalsAndThousands() {
        #expect(ProfileReport.formatNumber(5) == "5")
        #expect(ProfileReport.formatNumber(3.33) == "3.33")
        #expect(ProfileReport.formatNumber(3.123423) == "3.12")
        #expect(ProfileReport.formatNumber(3.129) == "3.13")
        #expect(ProfileReport.formatNumber(0.125) == "0.13")
        #expect(ProfileReport.formatNumber(0.05) == "0.05")
        #expect(ProfileReport.formatNumber(3_123_423_232) == "3,123,423,232")
        #expect(ProfileReport.formatNumber(3_123_423_232.4242) == "3,123,423,232.42")
        #expect(ProfileReport.formatNumber(-1234.5) == "-1,234.50")
        #expect(ProfileReport.formatNumber(999.999) == "1,000")
    }

    @Test func bytesAreInPowersOfAThousand() {
        #expect(ProfileReport.formatBytes(15) == "15 B")
        #expect(ProfileReport.formatBytes(7.5) == "7.5 B")
        #expect(ProfileReport.formatBytes(999.4) == "999.4 B")
        #expect(ProfileReport.formatBytes(999.5) == "1 kB")
        #expect(ProfileReport.formatBytes(6_334_876) == "6.33 MB")
        #expect(ProfileReport.formatBytes(2_500_000_000) == "2.50 GB")
    }

    @Test func pathsWithManySiblingsFoldIntoAWildcard() {
        var few = OrderedPaths<Int>()
        for index in 0..<20 { few["/path/num\(index)"] = 1 }
        #expect(ProfileReport.collapsed(few, collapse: true, combine: +).entries.map(\.path) == few.paths)
        var many = OrderedPaths<Int>()
        for index in 0..<30 { many["/path/num\(index)/next\(index)"] = 1 }
        many["/path/num1/bar/test"] = 1
        many["/foo"] = 1
        let folded = ProfileReport.collapsed(many, collapse: true, combine: +)
        // Folded level by level; at each level the deeper paths come first, as the Firebase CLI
        // orders them.
        #expect(folded.entries.map(\.path) == ["/path/$wildcard/$wildcard/test", "/path/$wildcard/$wildcard", "/foo"])
        #expect(folded["/path/$wildcard/$wildcard"] == 30)
        #expect(ProfileReport.collapsed(many, collapse: false, combine: +).paths == many.paths)
    }

    @Test func anIndexIsNamedByItsOrderOrChild() throws {
        #expect(ProfileReport.readableIndex(try Self.record(#"{"index":{"path":["foo","bar"]}}"#)) == "/foo/bar")
        #expect(ProfileReport.readableIndex(try Self.record(#"{"index":{}}"#)) == ".value")
        #expect(ProfileReport.readableIndex(try Self.record(#"{"index":{"key":true},"orderBy":".key"}"#)) == ".key")
    }

    @Test func aTableIsDrawnWithBoxesAndARuleBetweenRows() {
        let table = TextTable(head: ["Path", "Count"], rows: [["/a", "1"], ["/longer", "12"]])
        #expect(
            table.render() == """
                ┌─────────┬───────┐
                │ Path    │ Count │
                ├─────────┼───────┤
                │ /a      │ 1     │
                ├─────────┼───────┤
                │ /longer │ 12    │
                └─────────┴───────┘
                """)
        #expect(
            TextTable(head: ["Path"]).render() == """
                ┌──────┐
                │ Path │
                └──────┘
                """)
    }

    /// Records of every kind add up in the tables they belong to, and the text and JSON reports
    /// show their totals.
    @Test func theReportAddsTheRecordsUp() throws {
        let lines = [
            #"{"name":"concurrent-connect","timestamp":1000,"millis":0.5,"client":{"remoteAddress":"127.0.0.1:1"}}"#,
            #"{"name":"rest-write","timestamp":1001,"path":["room","a"],"millis":2,"pendingTime":1,"bytes":13,"allowed":true}"#,
            #"{"name":"listener-broadcast","timestamp":1001,"path":["room","a"],"millis":0.25,"bytes":60,"clientsUpdated":2}"#,
            #"{"name":"rest-write","timestamp":1002,"path":["room","a"],"millis":4,"pendingTime":3,"bytes":13,"allowed":false}"#,
            #"{"name":"realtime-update","timestamp":1003,"path":["room"],"millis":1,"bytes":10,"allowed":true}"#,
            #"{"name":"listener-listen","timestamp":1004,"path":["scores"],"millis":1,"bytes":2000,"allowed":true,"unIndexed":true,"querySet":[{"index":{"path":["score"]},"default":false}]}"#,
            #"{"name":"listener-listen","timestamp":1005,"path":["scores"],"millis":3,"bytes":2000,"allowed":true,"unIndexed":true,"querySet":[{"index":{"path":["score"]},"default":false}]}"#,
            #"{"name":"rest-read","timestamp":1006,"path":[],"millis":5,"bytes":1500,"allowed":true,"unIndexed":false,"querySet":[{"index":{"priority":true},"orderBy":".priority","default":true}]}"#,
            #"{"name":"listener-unlisten","timestamp":1007,"path":["scores"],"pendingTime":2}"#,
            #"{"dropped":4,"timestamp":1008}"#,
            "not json",
            #"{"name":"concurrent-disconnect","timestamp":1010,"millis":1.5,"pendingTime":0.5}"#,
        ]
        var report = ProfileReport()
        for line in lines { report.add(line: line.utf8) }
        #expect(report.operations == 10)
        #expect(report.dropped == 4)
        #expect(report.startTime == 1000 && report.endTime == 1010)
        #expect(report.writeSpeed["/room/a"] == ProfileReport.Speed(times: 2, millis: 6, pendingCount: 2, pendingTime: 4, rejected: 1))
        #expect(report.uploaded["/room/a"] == ProfileReport.Bandwidth(times: 2, bytes: 26))
        #expect(report.uploaded["/room"] == ProfileReport.Bandwidth(times: 1, bytes: 10))
        #expect(report.downloaded["/room/a"] == ProfileReport.Bandwidth(times: 1, bytes: 60))
        #expect(report.downloaded["/scores"] == ProfileReport.Bandwidth(times: 2, bytes: 4000))
        #expect(report.downloaded["/"] == ProfileReport.Bandwidth(times: 1, bytes: 1500))
        #expect(report.broadcastSpeed["/room/a"]?.times == 1)
        #expect(report.connectSpeed?.times == 1 && report.disconnectSpeed?.pendingTime == 0.5)

        let write = report.writeSpeedTable(collapse: true)
        #expect(write.legend == ["Path", "Count", "Average Execution Speed", "Average Pending Time", "Permission Denied"])
        #expect(write.rows == [["/room/a", 2, "3 ms", "2 ms", "1"], ["/room", 1, "1 ms", "0 ms", "0"]])
        #expect(report.readSpeedTable(collapse: true).rows.map { $0[0] } == ["/", "/scores"])
        #expect(report.downloadedTable(collapse: true).rows.first == ["/scores", "4 kB", "2", "2 kB"])
        #expect(report.unindexedTable(collapse: true).rows == [["/scores", "/score", "2"]])
        #expect(report.connectSpeedTable().rows == [[1, "0.50 ms", "0 ms"]])

        let text = report.text(collapse: true, colour: false)
        #expect(text.split(separator: "\n").first == "Report operations collected from 1970-01-01T00:00:01.000Z over 10 ms.")
        #expect(text.contains("4 records were left out"))
        #expect(text.contains("Write Speed\n┌─────────┬───────┬"))
        #expect(text.contains("│ /room/a │ 2     │ 3 ms "))
        #expect(text.contains("Unindexed Queries\n"))

        let json = try JSONParser.parse(report.json(collapse: true))
        #expect(json["totalTime"] == 10)
        #expect(json["writeSpeed"]?["data"] == .array(write.rows.map(JSONValue.array)))
        #expect(json["uploadedBytes"]?["legend"] == ["Path", "Total", "Count", "Average"])
        let unindexedNote: JSONValue? = json["unindexedQueries"]?["note"]
        #expect(unindexedNote == Optional.none)
        #expect(json["droppedRecords"] == 4)
        #expect(report.json(collapse: true).hasPrefix("{\n  \"totalTime\": 10,\n  \"readSpeed\": {\n    \"legend\": [\n      \"Path\","))
    }

    /// A saved file is read a megabyte at a time: lines that straddle two reads, and a last
    /// line without its newline, come whole.
    @Test func aFileOfRecordsIsReadLineByLine() throws {
        let lines = (0..<40_000).map { #"{"name":"rest-write","timestamp":\#($0),"path":["p"],"bytes":1}"# }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("records-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(lines.joined(separator: "\n").utf8).write(to: url)
        #expect(try Data(contentsOf: url).count > 2 << 20)
        let file = try FileHandle(forReadingFrom: url)
        defer { try? file.close() }
        var read: [String] = []
        try ProfileCommand.forEachLine(of: file) { read.append(String(decoding: $0, as: UTF8.self)) }
        #expect(read == lines)
    }

    @Test func eventsAreReadFromPiecesOfAnySize() throws {
        var reader = ServerSentEvents()
        let stream = "event: log\ndata: {\"name\":\"a\"}\n\nevent: keep-alive\r\ndata: null\r\n\r\n: comment\n\ndata: one\ndata: two\n\n"
        var events: [ServerSentEvents.Event] = []
        for byte in stream.utf8 { events += try reader.read([byte]) }
        #expect(
            events == [
                .init(name: "log", data: #"{"name":"a"}"#), .init(name: "keep-alive", data: "null"), .init(name: "message", data: "one\ntwo"),
            ])
    }
}
