import KindlingCore
import KindlingSync

/// The kinds of events an observer can ask for, named as in the Firebase SDKs.
public enum DataEventType: Sendable, Hashable, CaseIterable {
    case value
    case childAdded
    case childChanged
    case childRemoved
    case childMoved

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
