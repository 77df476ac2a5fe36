#if canImport(Glibc)
import CMalloc
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix

/// Gives the system back memory a burst left free. glibc keeps freed blocks in its arenas, and
/// a block above the arena's top is returned only when everything above it is free too: after a
/// burst (readers that fell behind, a large read's answer, a flood of requests) the process kept
/// its peak resident size indefinitely, although the memory was free. Every `interval`, on a
/// worker thread, when more than `threshold` bytes lie free in the arenas, `malloc_trim(0)`
/// returns their whole free pages (memory it already returned still counts as free, so a check
/// then costs a few dozen `madvise` calls). glibc has no setting that does this by itself, and
/// SwiftNIO nothing for it, so it is written here. Measured: 300 MB written over REST then
/// deleted left 1.6 GB resident; within 10 s it was 73 MB.
final class FreedMemoryReturn: Sendable {
    private let task: RepeatedTask

    init(eventLoop: any EventLoop, workers: NIOThreadPool, interval: TimeAmount, threshold: Int, logger: Logger) {
        task = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            workers.submit { state in
                guard case .active = state else { return }
                logger.trace("checked the allocator: \(Self.freeBytes() >> 20) MiB free")
                if let returned = Self.returnFreeMemory(above: threshold), returned >= 1 << 20 {
                    logger.debug("returned \(returned >> 20) MiB of freed memory to the system")
                }
            }
        }
    }

    /// Stops the checks (at shutdown).
    func cancel() { task.cancel() }

    /// Trims the allocator's arenas if more than `threshold` bytes lie free in them; returns how
    /// much the resident size fell, or nil when nothing was tried.
    @discardableResult
    static func returnFreeMemory(above threshold: Int) -> Int? {
        #if canImport(Glibc)
        guard freeBytes() > threshold else { return nil }
        let before = residentBytes()
        malloc_trim(0)
        return max(0, before - residentBytes())
        #else
        return nil
        #endif
    }

    /// Bytes free in the allocator's arenas (returned to the system or not).
    static func freeBytes() -> Int {
        #if canImport(Glibc)
        Int(cmalloc_free_bytes())
        #else
        0
        #endif
    }

    /// The process's resident size, from `/proc/self/statm` (0 where it cannot be read).
    static func residentBytes() -> Int {
        #if canImport(Glibc)
        let descriptor = open("/proc/self/statm", O_RDONLY)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        // "size resident shared …", in pages.
        let fields = bytes[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return 0
        #endif
    }
}
