import Foundation
import KindlingClient
import Testing

/// The Firebase iOS "get started with Realtime Database" guide, step by step, against Kindling:
/// write a user, read it once, listen for posts, fan a new post out with `updateChildValues`,
/// star it in a transaction, delete it. Apart from `try` and `await` it reads like the guide.
@Suite(.timeLimit(.minutes(1)))
struct QuickStartExampleTests {
    struct User: Codable, Equatable {
        var username: String
    }

    struct Post: Codable, Equatable, Sendable {
        var uid: String
        var author: String
        var title: String
        var body: String
        var starCount: Int = 0
        @ServerTimestamp var createdAt: Date?
    }

    @Test func theFirebaseQuickStartRunsAsWritten() async throws {
        try await DatabaseTests.withServer { _, url in
            // let ref = Database.database().reference()
            let db = try Database(url: url)
            defer { db.shutdown() }
            let ref = db.reference()

            // Write data: self.ref.child("users").child(user.uid).setValue(["username": username])
            let userID = "ada"
            try await ref.child("users").child(userID).setValue(["username": "Ada"])

            // Read once: ref.child("users/\(uid)/username").getData { … }
            let userName = try await ref.child("users/\(userID)/username").getData().jsonValue.stringValue
            #expect(userName == "Ada")
            #expect(try await ref.child("users/\(userID)").getData().data(as: User.self) == User(username: "Ada"))

            // Listen for value events: postRef.observe(DataEventType.value) { snapshot in … }
            let feed = Task {
                var titles: [[String]] = []
                for try await posts in ref.child("posts").values(as: [String: Post].self) {
                    titles.append(posts.values.map(\.title).sorted())
                    if posts.values.contains(where: { $0.starCount > 0 }) { break }
                }
                return titles
            }

            // Update specific fields: a new post under /posts and under /user-posts/$uid at once.
            guard let key = ref.child("posts").childByAutoId().key else {
                Issue.record("a push id has a key")
                return
            }
            let post = Post(uid: userID, author: "Ada", title: "Hello", body: "First post")
            let encoded = try JSONValueEncoder().encode(post)
            try await ref.updateChildValues(["/posts/\(key)": encoded, "/user-posts/\(userID)/\(key)/": encoded])
            let stored = try await ref.child("user-posts/\(userID)/\(key)").getData().data(as: Post.self)
            #expect(stored.title == "Hello")
            // The server filled in the time of the write.
            let createdAt = try #require(stored.createdAt)
            #expect(abs(createdAt.timeIntervalSinceNow) < 60)

            // Save data as transactions: a star count that concurrent clients cannot lose.
            let starred = try await ref.child("posts/\(key)/starCount").runTransaction { count in
                .number((count.numberValue ?? 0) + 1)
            }
            #expect(starred.committed)
            #expect(try await feed.value.last == ["Hello"])

            // Delete data: removeValue (or setValue(nil)).
            try await ref.child("posts/\(key)").removeValue()
            try await ref.child("user-posts/\(userID)/\(key)").setValue(nil)
            #expect(try await ref.child("posts").getData().exists() == false)
            #expect(try await ref.child("user-posts").getData().exists() == false)
        }
    }
}
