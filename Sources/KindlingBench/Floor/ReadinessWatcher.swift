#if os(Linux)
import CEpoll
import Foundation
import Glibc

/// Tells an event loop which of its sockets have bytes to read, from a thread of its own
/// waiting in `epoll_wait` (edge-triggered), so the loop can read them with `read(2)` instead of
/// through SwiftNIO's channel (issue 40, round 11: `kindling-bench floor --io nio-watched`).
///
/// Why: SwiftNIO's read path costs about 1.6 µs per request at 256 connections with one
/// request in flight each (round 10), and SwiftNIO gives no way to read a channel's socket on
/// its loop other than through the channel. The channels stay SwiftNIO's (with reading turned
/// off), for closing and for what the socket does not take at once; this thread only waits.
/// Each wake hands the loop one batch of tokens (what `watch` was given), in one task.
/// Written by hand: no kept library offers an epoll readiness thread for SwiftNIO's loops.
final class ReadinessWatcher: Sendable {
    /// A system call the watcher needs failed.
    struct Failure: Error, CustomStringConvertible {
        let call: String
        let code: CInt

        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    private let poll: CInt
    /// An eventfd in the set: `stop()` writes it, and the thread then ends.
    private let wake: CInt

    /// Starts the thread; `ready` gets each wake's tokens, on the watcher's thread (it hands
    /// them to its loop itself).
    init(ready: @escaping @Sendable ([UInt64]) -> Void) throws(Failure) {
        let poll = epoll_create1(CInt(EPOLL_CLOEXEC))
        guard poll >= 0 else { throw Failure(call: "epoll_create1", code: errno) }
        let wake = eventfd(0, CInt(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            let failure = Failure(call: "eventfd", code: errno)
            close(poll)
            throw failure
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64.max
        guard epoll_ctl(poll, EPOLL_CTL_ADD, wake, &event) == 0 else {
            let failure = Failure(call: "epoll_ctl", code: errno)
            close(poll)
            close(wake)
            throw failure
        }
        self.poll = poll
        self.wake = wake
        Thread.detachNewThread { [poll, wake] in Self.run(poll: poll, wake: wake, ready: ready) }
    }

    /// Watches `descriptor` until it is closed; `token` names it to `ready`. Bytes already
    /// waiting are reported at once.
    func watch(_ descriptor: CInt, token: UInt64) -> Bool {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.u64 = token
        return epoll_ctl(poll, EPOLL_CTL_ADD, descriptor, &event) == 0
    }

    /// Ends the thread (from any thread); it closes the set.
    func stop() { _ = eventfd_write(wake, 1) }

    private static func run(poll: CInt, wake: CInt, ready: @Sendable ([UInt64]) -> Void) {
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: 1024)
        defer {
            events.deallocate()
            close(poll)
            close(wake)
        }
        while true {
            let count = epoll_wait(poll, events, 1024, -1)
            guard count >= 0 else {
                if errno == EINTR { continue }
                return
            }
            var tokens: [UInt64] = []
            tokens.reserveCapacity(Int(count))
            for index in 0..<Int(count) {
                let token = events[index].data.u64
                if token == UInt64.max { return }
                tokens.append(token)
            }
            ready(tokens)
        }
    }
}
#endif
