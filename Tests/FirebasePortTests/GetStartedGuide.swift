// The Firebase iOS guide "Read and Write Data on Apple Platforms", its snippets as written
// there (Swift 5, callbacks), with `import FirebaseDatabase` changed to `import KindlingClient`.
import Foundation
import KindlingClient

struct User: Codable {
    var username: String
    var email: String?
}

final class GetStartedGuide {
    var ref: DatabaseReference!
    var refHandle: DatabaseHandle?
    var postTitles: [String] = []
    var lastUsername: String?
    let lock = NSLock()

    init(url: String) {
        ref = Database.database(url: url).reference()
    }

    // Basic write
    func writeUser(uid: String, username: String, done: @escaping (Error?) -> Void) {
        self.ref.child("users").child(uid).setValue(["username": username]) { (error: Error?, ref: DatabaseReference) in
            done(error)
        }
    }

    func writeCodableUser(uid: String, user: User, done: @escaping (Error?) -> Void) {
        do {
            try ref.child("users").child(uid).setValue(from: user) { error in done(error) }
        } catch let error {
            print("Error writing user to Firebase: \(error)")
            done(error)
        }
    }

    func updateUsername(uid: String, username: String) {
        self.ref.child("users/\(uid)/username").setValue(username)
    }

    // Read once
    func readUsername(uid: String, done: @escaping (String?) -> Void) {
        ref.child("users/\(uid)/username").getData(completion: { error, snapshot in
            guard error == nil else {
                print(error!.localizedDescription)
                done(nil)
                return
            }
            let userName = snapshot?.value as? String ?? "Unknown"
            done(userName)
        })
    }

    func readUser(uid: String, done: @escaping (User?) -> Void) {
        ref.child("users").child(uid).observeSingleEvent(
            of: .value,
            with: { snapshot in
                let value = snapshot.value as? NSDictionary
                let username = value?["username"] as? String ?? ""
                self.lock.lock()
                self.lastUsername = username
                self.lock.unlock()
                done(try? snapshot.data(as: User.self))
            }
        ) { error in
            print(error.localizedDescription)
            done(nil)
        }
    }

    // Listen for value events
    func listenForPosts() {
        refHandle = ref.child("posts").observe(
            DataEventType.value,
            with: { snapshot in
                let postDict = snapshot.value as? [String: AnyObject] ?? [:]
                let titles = postDict.values.compactMap { ($0 as? [String: AnyObject])?["title"] as? String }.sorted()
                self.lock.lock()
                self.postTitles = titles
                self.lock.unlock()
            })
    }

    // Update specific fields (fan-out)
    func writeNewPost(withUserID userID: String, username: String, title: String, body: String) -> String? {
        guard let key = ref.child("posts").childByAutoId().key else { return nil }
        let post = ["uid": userID, "author": username, "title": title, "body": body, "starCount": 0] as [String: Any]
        let childUpdates = ["/posts/\(key)": post, "/user-posts/\(userID)/\(key)/": post]
        ref.updateChildValues(childUpdates)
        return key
    }

    // Save data as transactions
    func onStarTapped(_ postRef: DatabaseReference, uid: String, done: @escaping (Bool) -> Void) {
        postRef.runTransactionBlock({ (currentData: MutableData) -> TransactionResult in
            if var post = currentData.value as? [String: AnyObject] {
                var stars: [String: Bool]
                stars = post["stars"] as? [String: Bool] ?? [:]
                var starCount = post["starCount"] as? Int ?? 0
                if stars[uid] != nil {
                    // Unstar the post and remove self from stars
                    starCount -= 1
                    stars.removeValue(forKey: uid)
                } else {
                    // Star the post and add self to stars
                    starCount += 1
                    stars[uid] = true
                }
                post["starCount"] = starCount as AnyObject?
                post["stars"] = stars as AnyObject?

                // Set value and report transaction success
                currentData.value = post

                return TransactionResult.success(withValue: currentData)
            }
            return TransactionResult.success(withValue: currentData)
        }) { error, committed, snapshot in
            if let error = error {
                print(error.localizedDescription)
            }
            done(committed)
        }
    }

    // Atomic server-side increments
    func incrementStars(forPost postID: String, by userID: String) {
        let updates =
            [
                "posts/\(postID)/stars/\(userID)": true,
                "posts/\(postID)/starCount": ServerValue.increment(1),
            ] as [String: Any]
        ref.updateChildValues(updates)
    }

    // Delete data, detach listeners
    func deletePost(_ key: String) {
        ref.child("posts").child(key).removeValue()
    }

    func detach() {
        if let refHandle = refHandle {
            ref.child("posts").removeObserver(withHandle: refHandle)
        }
        ref.child("posts").removeAllObservers()
    }

    // The guide's async variants
    func writeAndReadAsync(uid: String, username: String) async -> String? {
        do {
            try await ref.child("users").child(uid).setValue(["username": username])
            let snapshot = try await ref.child("users/\(uid)/username").getData()
            return snapshot.value as? String ?? "Unknown"
        } catch {
            print(error)
            return nil
        }
    }

    func starAsync(_ postRef: DatabaseReference, uid: String) async throws -> Bool {
        let (committed, _) = try await postRef.runTransactionBlock { currentData in
            var post = currentData.value as? [String: Any] ?? [:]
            var stars = post["stars"] as? [String: Bool] ?? [:]
            stars[uid] = true
            post["stars"] = stars
            post["starCount"] = stars.count
            currentData.value = post
            return TransactionResult.success(withValue: currentData)
        }
        return committed
    }

    func fanOutAsync(userID: String, key: String, post: [String: Any]) async throws {
        let childUpdates = ["/posts/\(key)": post, "/user-posts/\(userID)/\(key)/": post]
        try await ref.updateChildValues(childUpdates)
    }
}
