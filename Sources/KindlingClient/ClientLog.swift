import Foundation
import Synchronization

/// The SDK's own log, off unless the app turns it on (`Database.setLoggingEnabled(true)`, as in
/// Firebase): the connection's life and every frame sent and received, on standard error.
enum ClientLog {
    private static let enabled = Atomic<Bool>(false)

    static var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set { enabled.store(newValue, ordering: .relaxed) }
    }

    /// Writes `message` when the log is on; `message` is only built then.
    static func log(_ message: @autoclosure () -> String) {
        guard isEnabled else { return }
        let line = "[Kindling] \(message())\n"
        try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
    }

    /// A frame as logged: at most 1,000 characters of it.
    static func frame(_ text: String) -> String {
        text.count > 1000 ? String(text.prefix(1000)) + "… (\(text.utf8.count) bytes)" : text
    }
}
