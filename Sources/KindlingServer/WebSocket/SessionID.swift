import KindlingCore

/// A realtime session's id, the handshake's `s`: `<connection number>-<random 64-bit number>`.
/// The SDKs send it back as `ls` when they reconnect, which lets the server close the old
/// connection (its onDisconnect writes made) if the network left it half-open. The random part
/// is what proves the client held the session: a connection number alone is easy to guess.
struct SessionID: Sendable, Equatable, CustomStringConvertible {
    let connection: ConnectionID
    let token: UInt64

    /// A new session for `connection` (its random part never 0, which means none).
    init(connection: ConnectionID) {
        self.connection = connection
        token = UInt64.random(in: 1...UInt64.max)
    }

    /// The session named by an `ls` parameter; nil for text that is not one (a number out of
    /// range included), which is then ignored as the parameter was before.
    init?(_ text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "-"), maxSplits: 1, omittingEmptySubsequences: false)
        // Digits only (`Int` and `UInt64` would take a sign); a number past their range is nil.
        guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
            let number = Int(String(decoding: parts[0], as: UTF8.self)), let token = UInt64(String(decoding: parts[1], as: UTF8.self))
        else { return nil }
        connection = ConnectionID(value: number)
        self.token = token
    }

    var description: String { "\(connection.value)-\(token)" }
}
