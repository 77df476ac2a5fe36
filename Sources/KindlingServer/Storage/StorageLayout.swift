#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Where a namespace's files live and how they are named:
/// `<data-dir>/<namespace>/snapshot-<sequence>.ksnap.gz` holds the tree as of a sequence number,
/// `log-<first sequence>.klog` the records from there on. Numbers are zero-padded so names sort.
enum StorageLayout {
    /// The namespace's directory (its name percent-encoded where it is not a plain file name).
    static func directory(dataDirectory: String, namespace: String) -> String {
        var name = ""
        for byte in namespace.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                name.append(Character(Unicode.Scalar(byte)))
            default:
                name += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        if name.hasPrefix(".") { name = "%2E" + name.dropFirst() }
        return dataDirectory + "/" + name
    }

    /// The namespace a directory name stands for (the reverse of `directory`).
    static func namespace(fromDirectoryName name: String) -> String? {
        RequestTarget.percentDecode(Substring(name), plusIsSpace: false)
    }

    static func segmentPath(_ directory: String, startingAt sequence: UInt64) -> String {
        directory + "/log-" + String(sequence).leftPadded(to: 20) + ".klog"
    }

    static func snapshotPath(_ directory: String, sequence: UInt64) -> String {
        directory + "/snapshot-" + String(sequence).leftPadded(to: 20) + ".ksnap.gz"
    }

    /// Log segments as (first sequence, path), in order.
    static func segments(in directory: String) -> [(start: UInt64, path: String)] {
        numbered(in: directory, prefix: "log-", suffix: ".klog")
    }

    /// Snapshots as (sequence, path), in order.
    static func snapshots(in directory: String) -> [(start: UInt64, path: String)] {
        numbered(in: directory, prefix: "snapshot-", suffix: ".ksnap.gz")
    }

    fileprivate static func numbered(in directory: String, prefix: String, suffix: String) -> [(start: UInt64, path: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> (UInt64, String)? in
            guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
            guard let number = UInt64(name.dropFirst(prefix.count).dropLast(suffix.count)) else { return nil }
            return (number, directory + "/" + name)
        }.sorted { $0.0 < $1.0 }
    }

    static func createDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw StorageError.io("cannot create \(path): \(error.localizedDescription)")
        }
    }

    /// Writes a file atomically: `body` writes the contents to a temporary file's descriptor,
    /// which is synced, renamed into place, and the directory synced, so a crash leaves either
    /// the old file or the whole new one.
    static func writeAtomically(to path: String, _ body: (_ descriptor: Int32, _ path: String) throws -> Void) throws {
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw StorageError.io("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        do {
            try body(descriptor, temporary)
            guard fsync(descriptor) == 0 else { throw StorageError.io("fsync of \(temporary) failed: \(String(cString: strerror(errno)))") }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw StorageError.io("cannot rename \(temporary): \(String(cString: strerror(errno)))")
        }
        syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Writes all of `bytes` to `descriptor` (the file `path`, for errors).
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw StorageError.io("write to \(path) failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Reads what is available from `descriptor` into `buffer`: the count, 0 at the end of the file.
    static func readSome(_ descriptor: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>) throws -> Int {
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw StorageError.io("read failed: \(String(cString: strerror(errno)))") }
        }
    }

    /// Syncs a directory, so a file created or renamed in it survives a crash.
    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw StorageError.io("cannot read \(path)") }
        return [UInt8](data)
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension StorageLayout {
    /// The folder inside a namespace's directory where retired log segments (compressed) and
    /// snapshots are kept for history (`HistoryPolicy`).
    static func historyDirectory(_ directory: String) -> String { directory + "/history" }

    static func historySegmentPath(_ directory: String, startingAt sequence: UInt64) -> String {
        historyDirectory(directory) + "/log-" + String(sequence).leftPadded(to: 20) + ".klog.gz"
    }

    static func historySnapshotPath(_ directory: String, sequence: UInt64) -> String {
        historyDirectory(directory) + "/snapshot-" + String(sequence).leftPadded(to: 20) + ".ksnap.gz"
    }

    /// A retired segment renamed into the history, not yet compressed.
    static func historyPlainSegmentPath(_ directory: String, startingAt sequence: UInt64) -> String {
        historyDirectory(directory) + "/log-" + String(sequence).leftPadded(to: 20) + ".klog"
    }

    /// Kept log segments as (first sequence, path), in order: the compressed copy of a segment
    /// kept in both forms (a compression cut short) only.
    static func historySegments(in directory: String) -> [(start: UInt64, path: String)] {
        var kept: [UInt64: String] = [:]
        for (start, path) in historyPlainSegments(in: directory) { kept[start] = path }
        for (start, path) in numbered(in: historyDirectory(directory), prefix: "log-", suffix: ".klog.gz") { kept[start] = path }
        return kept.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Kept log segments not yet compressed.
    static func historyPlainSegments(in directory: String) -> [(start: UInt64, path: String)] {
        numbered(in: historyDirectory(directory), prefix: "log-", suffix: ".klog")
    }

    /// Kept snapshots as (sequence, path), in order.
    static func historySnapshots(in directory: String) -> [(start: UInt64, path: String)] {
        numbered(in: historyDirectory(directory), prefix: "snapshot-", suffix: ".ksnap.gz")
    }

    /// A file's last modification, in milliseconds since 1970, and its size; nil when it is gone.
    static func stamp(_ path: String) -> (time: Int64, bytes: Int)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let date = attributes[.modificationDate] as? Date
        else { return nil }
        let bytes = (attributes[.size] as? NSNumber)?.intValue ?? 0
        return (Int64((date.timeIntervalSince1970 * 1000).rounded(.up)), bytes)
    }
}
