import KindlingCore
import KindlingSync

/// The kinds of events an observer can ask for, named and numbered as in the Firebase SDKs.
public enum DataEventType: Int, Sendable, Hashable, CaseIterable {
    case childAdded = 0
    case childRemoved = 1
    case childChanged = 2
    case childMoved = 3
    case value = 4

    /// The sync tree's kind of event this observer receives.
    var eventKind: EventKind {
        switch self {
        case .value: return .value
        case .childAdded: return .childAdded
        case .childChanged: return .childChanged
        case .childRemoved: return .childRemoved
        case .childMoved: return .childMoved
        }
    }

    /// The wire-style name (`child_added`), used by the CLI and in descriptions.
    public var name: String { eventKind.name }
}
