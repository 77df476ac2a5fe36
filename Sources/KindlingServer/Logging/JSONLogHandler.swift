#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KindlingCore
import Logging

/// `kindling serve --log-format json`: one JSON object per line on standard error, for log
/// shippers (Loki, Vector, CloudWatch, …):
/// `{"time":"2026-01-02T03:04:05.678Z","level":"info","label":"kindling","message":"…","metadata":{…}}`.
///
/// Written here because no package in the dependency mirror provides a JSON `LogHandler` for
/// swift-log (swift-log ships only the text `StreamLogHandler`). Metadata values keep their
/// shape: strings, nested dictionaries and arrays. Each line goes out in one `write(2)`, so
/// lines from different threads do not interleave.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let output: @Sendable ([UInt8]) -> Void

    /// - Parameter output: where each line goes (with its newline); standard error by default.
    public init(label: String, output: @escaping @Sendable ([UInt8]) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let given = event.metadata { merged.merge(given) { _, new in new } }
        output(
            JSONLogHandler.line(
                time: JSONLogHandler.now(), level: event.level, label: label, message: event.message.description, metadata: merged
            ))
    }

    /// One log line as bytes, newline included; keys in a fixed order, metadata sorted by key.
    public static func line(time: String, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [UInt8] {
        var members = [
            JSONMember("time", .string(time)), JSONMember("level", .string(level.rawValue)), JSONMember("label", .string(label)),
            JSONMember("message", .string(message)),
        ]
        if !metadata.isEmpty { members.append(JSONMember("metadata", json(.dictionary(metadata)))) }
        var writer = JSONWriter()
        writer.write(.object(members))
        writer.bytes.append(UInt8(ascii: "\n"))
        return writer.bytes
    }

    private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let entries): .object(entries.sorted { $0.key < $1.key }.map { JSONMember($0.key, json($0.value)) })
        }
    }

    /// The current UTC time as RFC 3339 with milliseconds.
    static func now() -> String { timestamp(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }

    /// `2026-01-02T03:04:05.678Z` for a Unix time in milliseconds (the proleptic Gregorian
    /// calendar, by Howard Hinnant's days-to-civil arithmetic; no C time structures involved).
    static func timestamp(millisecondsSinceEpoch milliseconds: Int64) -> String {
        // Floor division, so a time before 1970 has a positive millisecond and second of day.
        let millisecond = (milliseconds % 1000 + 1000) % 1000
        let seconds = (milliseconds - millisecond) / 1000
        let secondOfDay = (seconds % 86_400 + 86_400) % 86_400
        let (year, month, day) = CivilDate.civil(days: (seconds - secondOfDay) / 86_400)
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let time = "\(padded(secondOfDay / 3600, 2)):\(padded(secondOfDay / 60 % 60, 2)):\(padded(secondOfDay % 60, 2))"
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(time).\(padded(millisecond, 3))Z"
    }

    /// Writes a line to standard error in one system call (retried when interrupted or short).
    public static let standardError: @Sendable ([UInt8]) -> Void = { bytes in
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
