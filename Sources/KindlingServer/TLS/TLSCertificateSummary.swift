import Foundation

/// What an operator needs to know about the certificate a server serves: which one it is (after
/// a reload, the new serial confirms the renewal was picked up) and when it runs out.
public struct TLSCertificateSummary: Sendable, Equatable, CustomStringConvertible {
    /// The leaf certificate's serial number, in hex.
    public var serial: String
    /// When the leaf certificate expires, in seconds since 1970.
    public var notValidAfter: Int

    /// True once the certificate's validity has ended (clients refuse it from then on).
    public var isExpired: Bool { Date().timeIntervalSince1970 > TimeInterval(notValidAfter) }

    public var description: String {
        let expiry = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(notValidAfter)))
        return "serial \(serial), expires \(expiry)"
    }
}
