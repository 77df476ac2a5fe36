/// A node's priority, kept out of line: few nodes have one, and inline it would take 24 bytes
/// in every parent's storage.
final class NodePriorityBox: Sendable {
    let priority: Priority

    init(_ priority: Priority) { self.priority = priority }
}
