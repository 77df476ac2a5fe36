import Foundation

/// A data directory of its own for node processes, removed when the last holder lets go.
final class ClusterScratchDirectory: Sendable {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("kindling-cluster-\(UUID().uuidString)").path

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
