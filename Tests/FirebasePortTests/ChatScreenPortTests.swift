import Foundation
import KindlingClient
import KindlingServer
import KindlingTesting
import Testing

/// Runs `ChatScreen`, a @MainActor screen's Firebase code with only its import changed.
@Suite(.timeLimit(.minutes(2)))
struct ChatScreenPortTests {
    @MainActor
    @Test func aMainActorScreensBlocksAndPlainCallsWorkUnchanged() async throws {
        try await KindlingTesting.withServer(label: "firebase-port") { server in
            let url = "http://127.0.0.1:\(server.port)?ns=chat"
            let screen = ChatScreen(url: url)
            let reader = try Database(url: url)
            defer { reader.shutdown() }
            screen.viewDidLoad(room: "dive")
            screen.goOnline(user: "ada")
            screen.send("hello", room: "dive", user: "ada")
            screen.send("fins on", room: "dive", user: "ada")
            #expect(try await eventually { screen.messages == ["hello", "fins on"] })
            #expect(try await eventually { try await reader.reference("rooms/dive/count").getData().value as? Int == 2 })
            #expect(try await eventually { try await reader.reference("users/ada/sent").getData().value as? Int == 2 })
            #expect(try await reader.reference("presence/ada").getData().value as? Bool == true)
            #expect(screen.eventName(4) == .value && screen.eventName(0) == .childAdded)

            // The queued onDisconnect writes run when the connection ends.
            Database.database(url: url).goOffline()
            #expect(try await eventually { try await reader.reference("presence/ada").getData().exists() == false })
            #expect(try await eventually { try await reader.reference("lastOnline/ada/via").getData().value as? String == "disconnect" })

            // A reference from a full URL, the async single event. (Firebase's class switch
            // `DatabaseReference.goOnline()` would reach every database of the test process.)
            Database.database(url: url).goOnline()
            let fromURL = Database.database(url: url).reference(fromURL: "http://127.0.0.1:\(server.port)/rooms/dive/count?ns=chat")
            #expect(try await fromURL.observeSingleEvent(of: .value).value as? Int == 2)
            screen.stayOffline(user: "ada")
            let removed: DatabaseReference = try await reader.reference("rooms/dive/count").removeValue()
            #expect(removed.key == "count")
            screen.viewWillDisappear()
        }
    }
}
