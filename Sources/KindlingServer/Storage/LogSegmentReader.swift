/// Reads the records of one log file and tells a torn tail (a crash mid-append: cut off) from
/// damage in the middle (stop, unless repairing).
struct LogSegmentReader {
    /// What reading found.
    struct Contents {
        var records: [LogRecord]
        /// The length of the valid prefix: the file is cut here when its tail is torn.
        var validLength: Int
        /// Why the tail was dropped, if it was.
        var tornTail: String?
    }

    /// Reads `bytes` (the whole file). A bad record followed by nothing valid is a torn tail; a
    /// bad record followed by more data is corruption (thrown as `StorageError.corruptLog`),
    /// unless `repair` is set, in which case everything from it on is dropped.
    static func read(_ bytes: [UInt8], file: String, repair: Bool) throws -> Contents {
        var records: [LogRecord] = []
        var offset = 0
        let all = bytes[...]
        while offset < bytes.count {
            let problem: String
            if bytes.count - offset < LogRecord.headerSize {
                problem = "a record header cut short"
            } else {
                let length = Int(LogRecord.readUInt32(all, at: offset))
                let checksum = LogRecord.readUInt32(all, at: offset + 4)
                let start = offset + LogRecord.headerSize
                if length > bytes.count - start {
                    problem = "a record of \(length) bytes cut short"
                } else {
                    let body = all[start..<(start + length)]
                    let actual = body.withUnsafeBytes { CRC32.checksum($0) }
                    if actual == checksum {
                        do {
                            records.append(try LogRecord.decode(body: body))
                            offset = start + length
                            continue
                        } catch {
                            problem = "an unreadable record (\(error))"
                        }
                    } else {
                        problem = "a checksum mismatch"
                    }
                }
            }
            let isLast = !hasValidRecord(after: offset, in: all)
            if isLast || repair {
                return Contents(records: records, validLength: offset, tornTail: "\(problem) at byte \(offset) of \(file)")
            }
            throw StorageError.corruptLog(file: file, offset: offset, reason: problem)
        }
        return Contents(records: records, validLength: offset, tornTail: nil)
    }

    /// True when a well-formed record with a good checksum starts anywhere after `offset`: then
    /// the damage is not just an unfinished last append.
    private static func hasValidRecord(after offset: Int, in bytes: ArraySlice<UInt8>) -> Bool {
        var candidate = offset + 1
        while candidate + LogRecord.headerSize + 8 <= bytes.endIndex {
            let length = Int(LogRecord.readUInt32(bytes, at: candidate))
            let start = candidate + LogRecord.headerSize
            if length >= 8, length <= bytes.endIndex - start {
                let checksum = LogRecord.readUInt32(bytes, at: candidate + 4)
                if bytes[start..<(start + length)].withUnsafeBytes({ CRC32.checksum($0) }) == checksum { return true }
            }
            candidate += 1
        }
        return false
    }
}
