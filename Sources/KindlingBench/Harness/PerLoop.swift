import NIOCore
import NIOPosix

/// One value per event loop of a group, plus a `Tally`, so connections on the same loop share
/// a histogram with no locks; results are merged at the end by visiting each loop.
public final class PerLoop<Value>: Sendable {
    private let entries: [(loop: any EventLoop, value: NIOLoopBound<Value>, tally: Tally)]

    private init(entries: [(loop: any EventLoop, value: NIOLoopBound<Value>, tally: Tally)]) {
        self.entries = entries
    }

    /// Makes a value on each loop of `group`.
    public static func make(
        on group: MultiThreadedEventLoopGroup,
        _ makeValue: @escaping @Sendable () -> Value
    ) async throws -> PerLoop<Value> {
        var entries: [(loop: any EventLoop, value: NIOLoopBound<Value>, tally: Tally)] = []
        for loop in group.makeIterator() {
            let bound = try await loop.submit { NIOLoopBound(makeValue(), eventLoop: loop) }.get()
            entries.append((loop, bound, Tally()))
        }
        return PerLoop(entries: entries)
    }

    /// The value and tally of `loop`; call on that loop.
    public func local(on loop: any EventLoop) -> (value: Value, tally: Tally) {
        for entry in entries where entry.loop === loop { return (entry.value.value, entry.tally) }
        preconditionFailure("PerLoop asked for an event loop outside its group")
    }

    /// Every loop's tally, for reading progress from anywhere.
    public var tallies: [Tally] { entries.map(\.tally) }

    /// The sum of every loop's `completed`.
    public var completed: Int { entries.reduce(0) { $0 + $1.tally.completed } }

    /// The sum of every loop's `retried`.
    public var retried: Int { entries.reduce(0) { $0 + $1.tally.retried } }

    /// Runs `body` with each loop's value on its loop, returning the results in loop order.
    public func collect<Result: Sendable>(_ body: @escaping @Sendable (Value) -> Result) async throws -> [Result] {
        var results: [Result] = []
        for entry in entries {
            results.append(try await entry.loop.submit { [value = entry.value] in body(value.value) }.get())
        }
        return results
    }
}
