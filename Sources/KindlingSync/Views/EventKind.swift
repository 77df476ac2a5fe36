import KindlingCore

/// The kinds of events a listener can receive.
///
/// The cases are declared in the order the SDKs raise them within one view after one change:
/// removals first (so a list never holds more rows than it should), then additions, moves,
/// changes, and the value last (so a value listener sees the final state).
public enum EventKind: Int, Sendable, Hashable, Comparable, CaseIterable {
    case childRemoved
    case childAdded
    case childMoved
    case childChanged
    case value
    /// The server refused or ended the listen (for example permission denied); the registration
    /// is gone.
    case cancelled

    /// The name the JavaScript SDK and the wire use (`child_added`, `value`, …).
    public var name: String {
        switch self {
        case .childRemoved: return "child_removed"
        case .childAdded: return "child_added"
        case .childMoved: return "child_moved"
        case .childChanged: return "child_changed"
        case .value: return "value"
        case .cancelled: return "cancel"
        }
    }

    public static func < (lhs: EventKind, rhs: EventKind) -> Bool { lhs.rawValue < rhs.rawValue }
}
