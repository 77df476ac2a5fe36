import KindlingCore
import Testing

@testable import KindlingServer

/// A forwarded write's id, on the wire to the leader and in the record the leader logs: kept
/// through both, and absent (not refused) in what nodes without ids sent or logged.
@Suite
struct ForwardedWriteIDTests {
    @Test func theIdGoesToTheLeaderWithTheWrite() throws {
        let operation = Operation.set(path: try Path("seats"), data: .number(14), precondition: .etag("abc"))
        var write = try #require(ForwardedWrite(operation, auth: .admin, origin: .rest))
        #expect(write.id == nil)
        write.id = "0123456789abcdefghijKL"
        let decoded = try ForwardedWrite.decode(write.encoded())
        #expect(decoded.id == "0123456789abcdefghijKL")
        guard case .set(_, _, .etag("abc")?) = decoded.operation else {
            Issue.record("the precondition goes with it")
            return
        }
        // A follower of an earlier version sends none.
        let older = try ForwardedWrite.decode(Array(#"{"o":"push","p":["x"],"d":1,"a":{"k":"anonymous"}}"#.utf8))
        #expect(older.id == nil)
    }

    @Test func anIdThatIsNotOneIsRefused() {
        for id in ["\"\"", "\"\(String(repeating: "x", count: 65))\""] {
            #expect(throws: ValidationError.self) {
                try ForwardedWrite.decode(Array(#"{"o":"set","p":["x"],"d":1,"a":{"k":"admin"},"i":\#(id)}"#.utf8))
            }
        }
    }

    @Test func aRecordKeepsItsIdBesideItsWriterAndTime() throws {
        let samples = [
            LogRecord(sequence: 5, write: .set(try Path("m/-Nx"), Node(.string("hi"))), time: 1_700_000_000_123, writeID: "abcDEF0123456789abcDEF"),
            LogRecord(
                sequence: 6, write: .merge(try Path("u"), [MergeEntry(path: try Path("a"), node: Node(.number(1)))]), time: 1_700_000_000_124,
                writer: Array(#"{"uid":"ada"}"#.utf8), writeID: "x"),
            LogRecord(sequence: 7, write: .set(try Path("n"), Node(.bool(true))), writeID: "no-time"),
        ]
        var batch: [UInt8] = []
        for record in samples { record.encode(into: &batch) }
        let contents = try LogSegmentReader.read(batch, file: "batch", repair: false)
        #expect(contents.records == samples)
        // The time stays last, where history reads it without parsing the record.
        let body = samples[1].encoded().dropFirst(LogRecord.headerSize)
        #expect(LogRecord.time(ofBody: body) == 1_700_000_000_124)
    }

    /// A record an earlier node logged (no `i`) reads as one without an id: the stream may
    /// still hold such records.
    @Test func aRecordWithoutAnIdStillReads() throws {
        let record = LogRecord(sequence: 3, write: .set(try Path("a"), Node(.number(1))), time: 1_000)
        let bytes = record.encoded()
        #expect(!String(decoding: bytes, as: UTF8.self).contains(#""i":"#))
        let read = try LogSegmentReader.read(bytes, file: "older", repair: false).records
        #expect(read == [record])
        #expect(read.first?.writeID == nil)
    }
}
