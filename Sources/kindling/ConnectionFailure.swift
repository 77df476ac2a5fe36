import AsyncHTTPClient
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a client command got no answer from a server, in words a user can act on. The errors
/// themselves describe the socket call that failed (`connection reset (error set):
/// Connection refused) (errno: 111)` for a port nothing listens on), which says neither what
/// happened nor what to check.
enum ConnectionFailure {
    /// The reason for `error`, thrown while connecting to or waiting on a server; the error's
    /// own description when it is none of the failures named here.
    static func reason(_ error: any Error) -> String {
        if let failure = error as? IOError { return reason(errno: failure.errnoCode) ?? "\(failure)" }
        if let failure = error as? NIOConnectionError {
            if failure.connectionErrors.isEmpty, failure.dnsAError != nil || failure.dnsAAAAError != nil {
                return "the host name \(failure.host) does not resolve"
            }
            if let first = failure.connectionErrors.first { return reason(first.error) }
            return "\(failure)"
        }
        if let failure = error as? HTTPClientError {
            switch failure {
            case .connectTimeout: return timedOut
            case .deadlineExceeded, .readTimeout: return "the server did not answer within the time allowed"
            case .remoteConnectionClosed: return "the server closed the connection before it answered"
            default: return "\(failure)"
            }
        }
        return "\(error)"
    }

    /// A connection not made in time, however it was reported (the socket's errno or the
    /// HTTP client's own timeout).
    private static let timedOut = "no connection within the time allowed (is the host up, and the port open?)"

    /// What a failed `connect` or read's `errno` means to a user; nil for others.
    static func reason(errno code: CInt) -> String? {
        switch code {
        case ECONNREFUSED: "connection refused: nothing listens on that port (is the server running, and is the URL right?)"
        case ETIMEDOUT: timedOut
        case EHOSTUNREACH, ENETUNREACH: "no route to the host"
        case ECONNRESET: "the server reset the connection"
        default: nil
        }
    }
}
