import Foundation
import KindlingClient
import Testing

/// The README's study-spot example with models, literals and an async sequence, run as written
/// (only the URL differs, and the watching task is awaited so the test can check what it saw).
@Suite(.timeLimit(.minutes(1)))
struct ReadmeModelExampleTests {
    struct CheckIn: Codable {
        var student: String
        @ServerTimestamp var at: Date?
    }

    @Test func studySpotCheckInWithModels() async throws {
        try await DatabaseTests.withServer { _, url in
            let db = try Database(url: url)
            defer { db.shutdown() }
            let spot = db.reference("spots/library-3")
            try await spot.setValue(["free": 1, "name": "Library, 3rd floor"])

            // Watch the spot: each value prints as JSON text.
            let watcher = Task {
                var printed: [String] = []
                for try await snapshot in spot.snapshots() {
                    printed.append("now: \(snapshot)")
                    if snapshot.jsonValue["free"] == 0 { break }
                }
                return printed
            }

            // Take a seat only if one is free; several students can race for the last one safely.
            let outcome = try await spot.child("free").runTransaction { free in
                guard let seats = free.numberValue, seats > 0 else { return nil }
                return .number(seats - 1)
            }
            if outcome.committed {
                let me = spot.child("checkins").childByAutoId()
                try await me.setValue(from: CheckIn(student: "ada"))  // "at" becomes the server's clock
                try await me.onDisconnect.removeValue()  // leave when the app goes away
                try await spot.child("free").onDisconnect.setValue(ServerValue.increment(1))
            }
            let checkIns = try await spot.child("checkins").getData().data(as: [String: CheckIn].self)
            #expect(checkIns.values.map(\.student) == ["ada"])
            #expect(checkIns.values.allSatisfy { $0.at != nil })
            // An update from a model changes its members and leaves the rest.
            struct Rename: Encodable { var name: String }
            try await spot.updateChildValues(from: Rename(name: "Library, 3rd floor"))
            #expect(try await spot.child("free").getData().value as? Int == 0)
            let printed = try await watcher.value
            #expect(printed.first?.hasPrefix(#"now: {"free":"#) == true)
            #expect(printed.last == #"now: {"free":0,"name":"Library, 3rd floor"}"#)
        }
    }
}
