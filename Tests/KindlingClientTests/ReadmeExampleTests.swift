import Dispatch
import KindlingClient
import Synchronization
import KindlingTesting
import Testing

/// The README's study-spot example, run as written (only the URL differs).
@Suite(.timeLimit(.minutes(1)))
struct ReadmeExampleTests {
    @Test func studySpotCheckIn() async throws {
        try await DatabaseTests.withServer { _, url in
            let db = try Database(url: url, callbackQueue: DispatchQueue(label: "ui"))
            defer { db.shutdown() }
            let spot = db.reference("spots/library-3")
            let seen = Recorder()
            spot.observeEvents(.value, on: seen.queue) { seen.record($0) }
            try await spot.child("free").setValue(.number(1))

            let outcome = try await spot.child("free").runTransaction { free in
                guard let seats = free.numberValue, seats > 0 else { return nil }
                return .number(seats - 1)
            }
            #expect(outcome.committed)
            if outcome.committed {
                let me = spot.child("checkins").childByAutoId()
                try await me.setValue(.object([JSONMember("at", ServerValue.timestamp())]))
                try await me.onDisconnect.removeValue()
                try await spot.child("free").onDisconnect.setValue(ServerValue.increment(1))
            }
            // The last seat is gone: a second check-in aborts.
            let second = try await spot.child("free").runTransaction { free in
                guard let seats = free.numberValue, seats > 0 else { return nil }
                return .number(seats - 1)
            }
            #expect(!second.committed)
            _ = try await seen.wait { $0.last?.snapshot.jsonValue["free"] == .number(0) && $0.last?.snapshot.childrenCount == 2 }

            // Leaving gives the seat back and removes the check-in.
            let other = try Database(url: url)
            defer { other.shutdown() }
            db.goOffline()
            #expect(try await eventually { try await other.reference("spots/library-3").getData().exportText == #"{"free":1}"# })
        }
    }
}
