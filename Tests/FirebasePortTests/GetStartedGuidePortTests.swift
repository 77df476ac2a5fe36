import Foundation
import KindlingClient
import KindlingServer
import KindlingTesting
import Testing

/// Runs `GetStartedGuide`, the Firebase iOS guide's snippets with only the import changed,
/// against a live server.
@Suite(.timeLimit(.minutes(2)))
struct GetStartedGuidePortTests {
    @Test func theGuidesSnippetsRunUnchanged() async throws {
        try await KindlingTesting.withServer(label: "firebase-port") { server in
            let url = "http://127.0.0.1:\(server.port)?ns=guide"
            let guide = GetStartedGuide(url: url)
            let reader = try Database(url: url)
            defer { reader.shutdown() }

            let written = await StudySpotsPortTests.result { done in guide.writeUser(uid: "u1", username: "ada", done: done) }
            #expect(written == nil)
            #expect(await StudySpotsPortTests.result { done in guide.readUsername(uid: "u1", done: done) } == "ada")
            guide.updateUsername(uid: "u1", username: "ada l.")
            #expect(try await eventually { try await reader.reference("users/u1/username").getData().value as? String == "ada l." })
            let codable = await StudySpotsPortTests.result { done in
                guide.writeCodableUser(uid: "u2", user: User(username: "bo", email: "bo@example.com"), done: done)
            }
            #expect(codable == nil)
            let user = await StudySpotsPortTests.result { done in guide.readUser(uid: "u2", done: done) }
            #expect(user?.username == "bo" && user?.email == "bo@example.com")
            #expect(guide.lock.withLock { guide.lastUsername } == "bo")

            guide.listenForPosts()
            let key = try #require(guide.writeNewPost(withUserID: "u1", username: "ada", title: "Hello", body: "First"))
            #expect(try await eventually { guide.lock.withLock { guide.postTitles } == ["Hello"] })
            #expect(try await reader.reference("user-posts/u1/\(key)/title").getData().value as? String == "Hello")

            let postRef = guide.ref.child("posts").child(key)
            #expect(await StudySpotsPortTests.result { done in guide.onStarTapped(postRef, uid: "u2", done: done) })
            #expect(try await reader.reference("posts/\(key)/starCount").getData().value as? Int == 1)
            #expect(try await reader.reference("posts/\(key)/stars/u2").getData().value as? Bool == true)
            guide.incrementStars(forPost: key, by: "u3")
            #expect(try await eventually { try await reader.reference("posts/\(key)/starCount").getData().value as? Int == 2 })

            guide.deletePost(key)
            #expect(try await eventually { guide.lock.withLock { guide.postTitles }.isEmpty })
            guide.detach()

            // The async variants.
            #expect(await guide.writeAndReadAsync(uid: "u9", username: "cy") == "cy")
            try await guide.fanOutAsync(userID: "u9", key: "p9", post: ["title": "Async", "starCount": 0])
            #expect(try await guide.starAsync(guide.ref.child("posts/p9"), uid: "u1"))
            #expect(try await reader.reference("posts/p9/starCount").getData().value as? Int == 1)
            #expect(try await reader.reference("user-posts/u9/p9/title").getData().value as? String == "Async")
        }
    }
}
