import Foundation

/// A fresh directory under the system's temporary folder, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String) throws(BenchError) {
        let path = NSTemporaryDirectory() + "/\(prefix)-\(UUID().uuidString)"
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw BenchError.serverFailed("cannot create \(path): \(error)")
        }
        self.path = path
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
