#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reads a backup back for `kindling restore --from`: a data file as `--backup-dir` writes it,
/// a hosted Realtime Database backup, or any JSON export, gzipped or not.
public enum BackupFile {
    /// The bytes of the JSON in `path`: gunzipped when the file starts with gzip's magic bytes
    /// (`1f 8b`, whatever its name), else as they are. A truncated or damaged gzip file is an
    /// error, never a shorter document (the gzip trailer's CRC-32 and length are checked).
    public static func read(_ path: String) throws(BackupError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(path: path, reason: FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file")
        }
        guard data.count >= 2, data[data.startIndex] == 0x1f, data[data.startIndex + 1] == 0x8b else { return [UInt8](data) }
        do {
            let gzip = try GzipReader(path: path)
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try gzip.read(into: $0) }
                if count == 0 { break }
                bytes.append(contentsOf: chunk[..<count])
            }
            return bytes
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
    }

    /// The rules file of the same backup as the data file `path`: `<name>_rules.json` beside
    /// `<name>_data.json.gz` (or an unzipped `<name>_data.json`), whatever `<name>` is, so a
    /// hosted Realtime Database backup is read as one `--backup-dir` wrote; nil when the name
    /// is not a backup's or the rules file is not there.
    public static func rulesBeside(_ path: String) -> String? {
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        guard let suffix = ["_data.json.gz", "_data.json"].first(where: { name.hasSuffix($0) && name.count > $0.count }) else { return nil }
        let rules = url.deletingLastPathComponent().appendingPathComponent(String(name.dropLast(suffix.count)) + "_rules.json").path
        return FileManager.default.fileExists(atPath: rules) ? rules : nil
    }
}
