// A chat screen as a UIKit app writes it against the Firebase iOS SDK: a @MainActor view
// controller whose blocks change its own state (Swift 5 mode), presence with the plain
// onDisconnect calls, a transaction without a completion block. Only the import is changed.
import Foundation
import KindlingClient

@MainActor
final class ChatScreen {
    var ref: DatabaseReference!
    var messages: [String] = []
    var typing: [String] = []
    var lastSeenOffset: Double = 0
    var handles: [DatabaseHandle] = []

    init(url: String) {
        ref = Database.database(url: url).reference()
    }

    func viewDidLoad(room: String) {
        let messagesRef = ref.child("rooms").child(room).child("messages")
        handles.append(
            messagesRef.queryOrderedByKey().queryLimited(toLast: 50).observe(
                .childAdded,
                with: { [weak self] snapshot in
                    guard let self = self, let message = snapshot.value as? [String: Any], let text = message["text"] as? String else { return }
                    self.messages.append(text)
                }))
        handles.append(
            messagesRef.observe(.childRemoved) { snapshot in
                self.messages.removeAll { $0 == (snapshot.childSnapshot(forPath: "text").value as? String) }
            })
        ref.child(".info/serverTimeOffset").observe(.value) { snapshot in
            self.lastSeenOffset = snapshot.value as? Double ?? 0
        }
    }

    func send(_ text: String, room: String, user: String) {
        let message: [String: Any] = ["text": text, "user": user, "sent": ServerValue.timestamp()]
        ref.child("rooms/\(room)/messages").childByAutoId().setValue(message)
        let counter = ref.child("rooms/\(room)/count")
        counter.runTransactionBlock { currentData in
            currentData.value = (currentData.value as? Int ?? 0) + 1
            return TransactionResult.success(withValue: currentData)
        }
        ref.child("users/\(user)/sent").setValue(ServerValue.increment(NSNumber(value: 1)))
    }

    func goOnline(user: String) {
        let presence = ref.child("presence").child(user)
        presence.onDisconnectRemoveValue()
        presence.setValue(true)
        let lastOnline = ref.child("lastOnline").child(user)
        lastOnline.onDisconnectSetValue(ServerValue.timestamp())
        lastOnline.onDisconnectUpdateChildValues(["via": "disconnect"])
    }

    func stayOffline(user: String) {
        ref.child("lastOnline").child(user).cancelDisconnectOperations()
    }

    func eventName(_ raw: Int) -> DataEventType? { DataEventType(rawValue: raw) }

    func viewWillDisappear() {
        for handle in handles { ref.removeObserver(withHandle: handle) }
        handles.removeAll()
    }
}
