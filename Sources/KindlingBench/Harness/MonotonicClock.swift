#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on the system's monotonic clock: the timestamp a scenario puts in a payload and
/// subtracts on receipt, cheaper than going through `ContinuousClock` per message.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}
