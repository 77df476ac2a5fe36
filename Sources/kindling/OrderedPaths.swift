/// Values by path, kept in the order the paths first came, as the Firebase CLI's report keeps
/// them (a JavaScript object's keys): its tables list rows in that order where they do not sort.
struct OrderedPaths<Value> {
    private(set) var paths: [String] = []
    private var values: [String: Value] = [:]

    var isEmpty: Bool { paths.isEmpty }

    subscript(path: String) -> Value? {
        get { values[path] }
        set {
            if values[path] == nil, newValue != nil { paths.append(path) }
            if newValue == nil, values[path] != nil { paths.removeAll { $0 == path } }
            values[path] = newValue
        }
    }

    /// Changes the value at `path`, made with `initial` when there is none yet.
    mutating func update(_ path: String, initial: @autoclosure () -> Value, _ change: (inout Value) -> Void) {
        var value = values[path] ?? initial()
        change(&value)
        self[path] = value
    }

    /// The paths and their values, in order.
    var entries: [(path: String, value: Value)] {
        paths.compactMap { path in values[path].map { (path, $0) } }
    }
}

extension OrderedPaths: Sendable where Value: Sendable {}
