#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The TCP socket and the 127.0.0.1 address that tests' own port checks use (`RefusingPort`,
/// NATSTesting's `LoopbackPorts`), made in one place: the socket call differs by platform.
public enum LoopbackSocket {
    /// A new TCP socket, nil when the system gives none. The caller closes it.
    public static func open() -> CInt? {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, CInt(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        return descriptor >= 0 ? descriptor : nil
    }

    /// The address 127.0.0.1:`port` (0: any free port, when bound).
    public static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
