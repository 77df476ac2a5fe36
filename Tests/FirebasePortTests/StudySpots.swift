// FlexStudy's database code as an app written against the Firebase iOS SDK has it (Swift 5,
// callbacks, `Any` values), with `import FirebaseDatabase` changed to `import KindlingClient`.
// Nothing in this file knows it talks to Kindling.
import Foundation
import KindlingClient

struct Activity {
    var key: String
    var location: String
    var start: Double
    var duration: Double?
}

final class StudySpots {
    var ref: DatabaseReference!
    var activities: [Activity] = []
    var seatsSeen: [String: Int] = [:]
    var connected = false
    var handles: [DatabaseHandle] = []
    let lock = NSLock()

    init(url: String) {
        ref = Database.database(url: url).reference()
    }

    func addLocations(_ seats: [Int], completion: @escaping (Error?) -> Void) {
        var locations: [String: Any] = [:]
        for (index, count) in seats.enumerated() {
            locations[String(index)] = ["name": "Spot \(index)", "seats": count]
        }
        ref.child("locations").setValue(locations) { (error: Error?, ref: DatabaseReference) in
            completion(error)
        }
    }

    func fetchAvailableSeats(index: Int, completion: @escaping (Int?) -> Void) {
        ref.child("locations").child(String(index)).observeSingleEvent(
            of: .value,
            with: { (snapshot) in
                let value = snapshot.value as? NSDictionary
                let seats = value?["seats"] as? Int
                completion(seats)
            }
        ) { (error) in
            print(error.localizedDescription)
            completion(nil)
        }
    }

    func watchSeats() {
        let handle = ref.child("locations").observe(
            .childChanged,
            with: { (snapshot) in
                if let location = snapshot.value as? [String: AnyObject], let seats = location["seats"] as? Int {
                    self.lock.lock()
                    self.seatsSeen[snapshot.key] = seats
                    self.lock.unlock()
                }
            })
        handles.append(handle)
    }

    /// Takes a seat if one is free: true when this student got it.
    func checkIn(user: String, index: Int, completion: @escaping (Bool) -> Void) {
        let seatsRef = ref.child("locations").child(String(index)).child("seats")
        seatsRef.runTransactionBlock({ (currentData: MutableData) -> TransactionResult in
            if var seats = currentData.value as? Int {
                if seats <= 0 {
                    return TransactionResult.abort()
                }
                seats -= 1
                currentData.value = seats
            }
            return TransactionResult.success(withValue: currentData)
        }) { (error, committed, snapshot) in
            if let error = error {
                print(error.localizedDescription)
            }
            guard committed else {
                completion(false)
                return
            }
            let activity = ["location": "Spot \(index)", "start": ServerValue.timestamp()] as [String: Any]
            let key = self.ref.child("users").child(user).child("activities").childByAutoId().key!
            let childUpdates: [String: Any] = [
                "/users/\(user)/activities/\(key)": activity,
                "/locations/\(index)/present/\(user)": true,
            ]
            self.ref.updateChildValues(childUpdates) { (error, _) in
                completion(error == nil)
            }
        }
    }

    func fetchActivityData(user: String) {
        let activitiesRef = ref.child("users").child(user).child("activities")
        handles.append(
            activitiesRef.observe(
                .childAdded,
                with: { (snapshot) in
                    guard let dict = snapshot.value as? [String: Any] else { return }
                    let activity = Activity(
                        key: snapshot.key, location: dict["location"] as? String ?? "", start: dict["start"] as? Double ?? 0,
                        duration: dict["duration"] as? Double)
                    self.lock.lock()
                    self.activities.append(activity)
                    self.lock.unlock()
                }))
        handles.append(
            activitiesRef.observe(
                .childChanged,
                with: { (snapshot) in
                    guard let dict = snapshot.value as? [String: Any] else { return }
                    self.lock.lock()
                    if let index = self.activities.firstIndex(where: { $0.key == snapshot.key }) {
                        self.activities[index].duration = dict["duration"] as? Double
                    }
                    self.lock.unlock()
                }))
    }

    /// Ends the activity without a duration and gives the seat back.
    func checkOut(user: String, index: Int, completion: @escaping (Bool) -> Void) {
        ref.child("users").child(user).child("activities").observeSingleEvent(
            of: .value,
            with: { (snapshot) in
                for child in snapshot.children.allObjects as! [DataSnapshot] {
                    let activity = child.value as? [String: Any] ?? [:]
                    if activity["duration"] == nil, let start = activity["start"] as? Double {
                        let hours = (Date().timeIntervalSince1970 * 1000 - start) / 3_600_000
                        child.ref.child("duration").setValue(hours)
                    }
                }
                self.ref.child("locations/\(index)/present/\(user)").removeValue()
                self.ref.child("locations").child(String(index)).child("seats").runTransactionBlock({ (currentData) -> TransactionResult in
                    currentData.value = (currentData.value as? Int ?? 0) + 1
                    return TransactionResult.success(withValue: currentData)
                }) { (error, committed, _) in
                    completion(error == nil && committed)
                }
            })
    }

    func findFriend(email: String, completion: @escaping (String?) -> Void) {
        ref.child("users").queryOrdered(byChild: "email").queryEqual(toValue: email).observeSingleEvent(of: .value) { (snapshot) in
            guard snapshot.exists() else {
                completion(nil)
                return
            }
            let child = snapshot.children.allObjects.first as? DataSnapshot
            completion(child?.key)
        }
    }

    func trackPresence(user: String) {
        let connectedRef = Database.database(url: ref.url).reference(withPath: ".info/connected")
        handles.append(
            connectedRef.observe(
                .value,
                with: { snapshot in
                    if snapshot.value as? Bool ?? false {
                        self.lock.lock()
                        self.connected = true
                        self.lock.unlock()
                        let status = self.ref.child("status").child(user)
                        status.onDisconnectSetValue("offline") { (error, _) in
                            status.setValue("online")
                        }
                    }
                }))
    }

    func stop() {
        for handle in handles { ref.removeObserver(withHandle: handle) }
        ref.child("locations").removeAllObservers()
    }
}
