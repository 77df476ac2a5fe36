import NIOCore
import Synchronization

/// What a request's door tells the namespace for the profiler, while someone profiles: when
/// the request arrived (so its record says how long it waited) and, for a REST request, the
/// client's address. Nil otherwise, made for no request.
struct ProfileTicket: Sendable {
    /// When the request arrived, on `ProfileClock`.
    let received: UInt64
    /// The client's address (`ProfileTicket.address`), when there is one.
    let client: String?

    /// A ticket for a request arriving now over `channel`, if `namespace` is profiled (one
    /// relaxed atomic load otherwise).
    static func now(for namespace: Namespace, from remote: @autoclosure () -> SocketAddress?) -> ProfileTicket? {
        guard namespace.profiled.load(ordering: .relaxed) else { return nil }
        return ProfileTicket(received: ProfileClock.now(), client: address(remote()))
    }

    /// An address as `ip:port` (`[ip]:port` for IPv6), or the socket path.
    static func address(_ address: SocketAddress?) -> String? {
        guard let address else { return nil }
        switch address {
        case .v4: return address.ipAddress.map { "\($0):\(address.port ?? 0)" }
        case .v6: return address.ipAddress.map { "[\($0)]:\(address.port ?? 0)" }
        case .unixDomainSocket: return address.pathname
        }
    }
}
