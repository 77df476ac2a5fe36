import Foundation
import KindlingCore
import Testing

@testable import KindlingServer

/// The onDisconnect journal's file: the last change of each connection wins, a torn tail is
/// cut, a mostly stale file is written again smaller, and taking it over removes it.
struct RegistrationJournalTests {
    private func directory() throws -> String {
        let path = NSTemporaryDirectory() + "kindling-journal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func registrations(_ value: String, at path: String = "/p") throws -> [UInt8] {
        let write = try #require(ForwardedWrite(.set(path: try Path(path), data: .string(value), precondition: nil), auth: .anonymous))
        return try #require(StoredRegistrations(writes: [write]).encoded())
    }

    /// What each taken-over registration sets, in order.
    private func values(_ left: [StoredRegistrations]) -> [String] {
        left.flatMap(\.writes).compactMap { write in
            if case .set(_, let data, _) = write.operation { return data.stringValue }
            return nil
        }
    }

    @Test func theLastChangeOfEachConnectionIsWhatIsLeftAndTakingOverRemovesTheFile() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = RegistrationJournal(directory: folder)
        let (a, b, c) = (ConnectionID.next(), ConnectionID.next(), ConnectionID.next())
        try journal.record(a, try registrations("a1"))
        try journal.record(b, try registrations("b1"))
        try journal.record(c, try registrations("c1"))
        try journal.record(a, try registrations("a2"))
        try journal.record(b, nil)
        #expect(values(try RegistrationJournal.takeOver(directory: folder)) == ["a2", "c1"])
        #expect(!FileManager.default.fileExists(atPath: folder + "/" + RegistrationJournal.fileName))
        #expect(try RegistrationJournal.takeOver(directory: folder).isEmpty)
    }

    @Test func aTornOrDamagedChangeEndsTheReading() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = RegistrationJournal(directory: folder)
        try journal.record(ConnectionID.next(), try registrations("kept"))
        let file = folder + "/" + RegistrationJournal.fileName
        let whole = try #require(FileManager.default.contents(atPath: file))
        try journal.record(ConnectionID.next(), try registrations("torn"))
        let both = try #require(FileManager.default.contents(atPath: file))
        for cut in [whole.count + 3, both.count - 1] {
            try both.prefix(cut).write(to: URL(fileURLWithPath: file))
            #expect(values(try RegistrationJournal.takeOver(directory: folder)) == ["kept"], "cut at \(cut)")
        }
        var damaged = [UInt8](both)
        damaged[damaged.count - 2] ^= 0xFF
        try Data(damaged).write(to: URL(fileURLWithPath: file))
        #expect(values(try RegistrationJournal.takeOver(directory: folder)) == ["kept"])
    }

    @Test func aMostlyStaleFileIsWrittenAgainWithWhatIsQueuedNow() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = RegistrationJournal(directory: folder)
        let kept = ConnectionID.next()
        try journal.record(kept, try registrations("kept"))
        let padding = String(repeating: "x", count: 1000)
        for _ in 0..<3000 {
            let passing = ConnectionID.next()
            try journal.record(passing, try registrations(padding))
            try journal.record(passing, nil)
        }
        let size = try #require(FileManager.default.attributesOfItem(atPath: folder + "/" + RegistrationJournal.fileName)[.size] as? Int)
        #expect(size < 2 * RegistrationJournal.rewriteAbove)
        #expect(values(try RegistrationJournal.takeOver(directory: folder)) == ["kept"])
    }
}
