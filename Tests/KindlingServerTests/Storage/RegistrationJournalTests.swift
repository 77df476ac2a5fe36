import Foundation
import KindlingCore
import Testing

@testable import KindlingServer

/// The onDisconnect journal's file: replaying its changes with the queue's rules gives what each
/// connection had queued, a torn tail is cut, a stale file is written again from the queues,
/// and taking it over removes it.
struct RegistrationJournalTests {
    private func directory() throws -> String {
        let path = NSTemporaryDirectory() + "kindling-journal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A write of `value` at `path` queued, to run as `auth`.
    private func set(_ path: String, _ value: String, as auth: AuthState = .anonymous) throws -> RegistrationJournal.Change {
        .queued(.set(path: try Path(path), data: .string(value), precondition: nil), as: auth)
    }

    /// What each taken-over registration sets, in order.
    private func values(_ left: [StoredRegistrations]) -> [String] {
        left.flatMap(\.writes).compactMap { write in
            if case .set(_, let data, _) = write.operation { return data.stringValue }
            return nil
        }
    }

    @Test func replayingTheChangesGivesWhatEachConnectionHadQueuedAndTakingOverRemovesTheFile() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = RegistrationJournal(directory: folder)
        let (a, b, c) = (ConnectionID.next(), ConnectionID.next(), ConnectionID.next())
        let alice = AuthState.overridden(by: .object([JSONMember("uid", .string("alice"))]))
        // Nothing is noted of a connection with nothing queued.
        journal.note(.identity(alice), of: b)
        journal.note(.cancelled(try Path("/q")), of: b)
        journal.note(.ended, of: b)
        #expect(!journal.hasPending)
        journal.note(try set("/p", "a1"), of: a)
        journal.note(try set("/q", "b1", as: alice), of: b)
        try journal.flush()
        journal.note(try set("/r", "c1"), of: c)
        journal.note(try set("/s", "s1"), of: c)
        journal.note(try set("/p", "a2"), of: a)  // overwrites a1
        journal.note(.identity(alice), of: a)
        journal.note(.ended, of: b)
        journal.note(.cancelled(try Path("/r")), of: c)
        try journal.flush()
        #expect(journal.journaled == [a, c])
        let taken = try RegistrationJournal.takeOver(directory: folder)
        #expect(values(taken.left) == ["a2", "s1"] && taken.unreadable == 0)
        #expect(taken.left.first?.writes.first?.auth == alice)
        #expect(!FileManager.default.fileExists(atPath: folder + "/" + RegistrationJournal.fileName))
        #expect(try RegistrationJournal.takeOver(directory: folder).left.isEmpty)
    }

    @Test func aTornOrDamagedChangeEndsTheReading() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = RegistrationJournal(directory: folder)
        journal.note(try set("/k", "kept"), of: ConnectionID.next())
        try journal.flush()
        let file = folder + "/" + RegistrationJournal.fileName
        let whole = try #require(FileManager.default.contents(atPath: file))
        journal.note(try set("/t", "torn"), of: ConnectionID.next())
        try journal.flush()
        let both = try #require(FileManager.default.contents(atPath: file))
        for cut in [whole.count + 3, both.count - 1] {
            try both.prefix(cut).write(to: URL(fileURLWithPath: file))
            #expect(values(try RegistrationJournal.takeOver(directory: folder).left) == ["kept"], "cut at \(cut)")
        }
        var damaged = [UInt8](both)
        damaged[damaged.count - 2] ^= 0xFF
        try Data(damaged).write(to: URL(fileURLWithPath: file))
        #expect(values(try RegistrationJournal.takeOver(directory: folder).left) == ["kept"])
    }

    @Test func aStaleFileIsWrittenAgainFromTheQueues() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = RegistrationJournal(directory: folder)
        let kept = ConnectionID.next()
        journal.note(try set("/k", "kept"), of: kept)
        let padding = String(repeating: "x", count: 1000)
        var rewrites = 0
        for _ in 0..<3000 {
            let passing = ConnectionID.next()
            journal.note(try set("/x", padding), of: passing)
            journal.note(.ended, of: passing)
            if journal.wantsRewrite {
                rewrites += 1
                guard case .queued(let write, _) = try set("/k", "kept") else { return }
                try journal.rewrite([(kept, .anonymous, [write])])
            } else {
                try journal.flush()
            }
        }
        #expect(rewrites >= 2)
        let size = try #require(FileManager.default.attributesOfItem(atPath: folder + "/" + RegistrationJournal.fileName)[.size] as? Int)
        #expect(size <= RegistrationJournal.rewriteAbove + 2_100)
        #expect(values(try RegistrationJournal.takeOver(directory: folder).left) == ["kept"])
    }
}
