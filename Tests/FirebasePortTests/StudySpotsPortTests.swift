import Foundation
import KindlingClient
import KindlingServer
import KindlingTesting
import Testing

/// Runs `StudySpots`, FlexStudy's Firebase code with only its import changed, against a live
/// server: the flows its users depend on, with three students racing for two seats.
@Suite(.timeLimit(.minutes(2)))
struct StudySpotsPortTests {
    /// Waits for a completion-block call's result.
    static func result<Value>(_ start: (@escaping (Value) -> Void) -> Void) async -> Value {
        await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
    }

    @Test func checkInRacesFindAFriendAndPresenceWorkUnchanged() async throws {
        try await KindlingTesting.withServer(label: "firebase-port") { server in
            let url = "http://127.0.0.1:\(server.port)?ns=flexstudy"
            let app = StudySpots(url: url)
            let error = await Self.result { done in app.addLocations([2, 5], completion: done) }
            #expect(error == nil)
            #expect(await Self.result { done in app.fetchAvailableSeats(index: 0, completion: done) } == 2)
            app.watchSeats()

            // Three students race for the two seats: exactly two get one.
            async let first = Self.result { done in app.checkIn(user: "ada", index: 0, completion: done) }
            async let second = Self.result { done in app.checkIn(user: "bo", index: 0, completion: done) }
            async let third = Self.result { done in app.checkIn(user: "cy", index: 0, completion: done) }
            let outcomes = await [first, second, third]
            #expect(outcomes.filter { $0 }.count == 2, "\(outcomes)")
            #expect(await Self.result { done in app.fetchAvailableSeats(index: 0, completion: done) } == 0)
            #expect(try await eventually { app.lock.withLock { app.seatsSeen["0"] } == 0 })

            // The activity a student started is listed, with its server time; checking out ends it.
            let student = ["ada", "bo", "cy"][outcomes.firstIndex(of: true) ?? 0]
            app.fetchActivityData(user: student)
            #expect(try await eventually { app.lock.withLock { app.activities.count } == 1 })
            let started = app.lock.withLock { app.activities.first?.start } ?? 0
            #expect(abs(started - Date().timeIntervalSince1970 * 1000) < 60_000)
            #expect(await Self.result { done in app.checkOut(user: student, index: 0, completion: done) })
            #expect(try await eventually { app.lock.withLock { app.activities.first?.duration } != nil })
            #expect(await Self.result { done in app.fetchAvailableSeats(index: 0, completion: done) } == 1)

            // A friend found by e-mail (a query on a child value).
            try await app.ref.child("users/dee/email").setValue("dee@example.com")
            #expect(await Self.result { done in app.findFriend(email: "dee@example.com", completion: done) } == "dee")
            #expect(await Self.result { done in app.findFriend(email: "nobody@example.com", completion: done) } == nil)

            // Presence: online while connected, offline once the connection ends.
            app.trackPresence(user: student)
            #expect(try await eventually { try await app.ref.child("status/\(student)").getData().value as? String == "online" })
            app.stop()
            Database.database(url: url).goOffline()
            let watcher = try Database(url: url)
            defer { watcher.shutdown() }
            #expect(try await eventually { try await watcher.reference("status/\(student)").getData().value as? String == "offline" })
            Database.database(url: url).goOnline()
        }
    }
}
