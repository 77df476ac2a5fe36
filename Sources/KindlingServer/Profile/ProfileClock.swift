import Dispatch

/// The profiler's clock: nanoseconds on a monotonic clock, read only while someone profiles.
enum ProfileClock {
    @Sendable static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
