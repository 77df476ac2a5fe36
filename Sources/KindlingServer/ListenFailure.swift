import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the server could not listen on the address it was given, said as what to change: the
/// socket call's own error (`bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)`)
/// names neither the address nor the flag.
public struct ListenFailure: Error, CustomStringConvertible, Sendable {
    public let host: String
    public let port: Int
    /// What went wrong, and what to do about it.
    public let reason: String

    public var description: String { "cannot listen on \(host):\(port): \(reason)" }

    /// The failure `error`, thrown by binding `host`:`port`, stands for.
    init(_ error: any Error, host: String, port: Int) {
        self.host = host
        self.port = port
        switch error {
        case let failure as IOError where failure.errnoCode == EADDRINUSE:
            reason = "the port is in use (another server listens there); stop it, or choose another --port"
        case let failure as IOError where failure.errnoCode == EACCES:
            reason = "a port below 1024 needs root (or CAP_NET_BIND_SERVICE); choose a --port of 1024 or more"
        case let failure as IOError where failure.errnoCode == EADDRNOTAVAIL:
            reason = "\(host) is not an address of this machine; use 127.0.0.1, 0.0.0.0 or one of its own addresses"
        case is SocketAddressError, is SocketAddressError.UnknownHost:
            reason = "the host name \(host) does not resolve"
        default:
            reason = "\(error)"
        }
    }
}
