import Foundation

/// The progress line of `kindling import` and `kindling export` on standard error: redrawn in
/// place on a terminal (at most ten times a second), else a line at every tenth of the total
/// or 16 MB, whichever is more, so a log is not flooded.
struct ProgressBar {
    let label: String
    /// The total in bytes, when known.
    let total: Int?
    let isTerminal: Bool
    private let started = ContinuousClock.now
    private var lastDrawn = ContinuousClock.now - .seconds(1)
    private var lastReported = 0
    private var drawn = false

    init(label: String, total: Int?, isTerminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.label = label
        self.total = total
        self.isTerminal = isTerminal
    }

    /// Shows `done` bytes, with `detail` after the numbers.
    mutating func update(_ done: Int, _ detail: String = "") {
        if isTerminal {
            guard ContinuousClock.now - lastDrawn >= .milliseconds(100) else { return }
            lastDrawn = .now
            FileHandle.standardError.write(Data(("\r" + line(done, detail) + "\u{1B}[K").utf8))
            drawn = true
        } else {
            let step = max(16 << 20, (total ?? 0) / 10)
            guard done / step > lastReported / step else { return }
            lastReported = done
            printError(line(done, detail))
        }
    }

    /// Ends the line with the final numbers.
    mutating func finish(_ done: Int, _ detail: String = "") {
        if isTerminal {
            FileHandle.standardError.write(Data(("\r" + line(done, detail) + "\u{1B}[K\n").utf8))
        } else {
            printError(line(done, detail))
        }
        drawn = false
    }

    /// Leaves the line being redrawn, so a message can follow on its own line.
    mutating func interrupt() {
        if isTerminal, drawn { FileHandle.standardError.write(Data("\n".utf8)) }
        drawn = false
    }

    /// `import [#########-----------]  45%  1.3 GB of 3.0 GB  41.2 MB/s  ETA 0:41  step 1337`.
    func line(_ done: Int, _ detail: String, elapsed: Duration? = nil) -> String {
        let time = (elapsed ?? ContinuousClock.now - started).components
        let seconds = max(0.001, Double(time.seconds) + Double(time.attoseconds) / 1e18)
        let rate = Double(done) / seconds
        var parts = [label]
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let filled = Int(fraction * 20)
            parts.append("[" + String(repeating: "#", count: filled) + String(repeating: "-", count: 20 - filled) + "]")
            parts.append(String(format: "%3d%%", Int(fraction * 100)))
            parts.append("\(Self.size(done)) of \(Self.size(total))")
            parts.append("\(Self.size(Int(rate)))/s")
            if rate > 0, done < total {
                let left = Int(Double(total - done) / rate)
                parts.append(String(format: "ETA %d:%02d", left / 60, left % 60))
            }
        } else {
            parts.append(Self.size(done))
            parts.append("\(Self.size(Int(rate)))/s")
        }
        if !detail.isEmpty { parts.append(detail) }
        return parts.joined(separator: "  ")
    }

    /// Bytes in B, KB, MB or GB (powers of 1024), one decimal above KB.
    static func size(_ bytes: Int) -> String {
        switch bytes {
        case ..<1024: "\(bytes) B"
        case ..<(1 << 20): "\(bytes >> 10) KB"
        case ..<(1 << 30): String(format: "%.1f MB", Double(bytes) / Double(1 << 20))
        default: String(format: "%.2f GB", Double(bytes) / Double(1 << 30))
        }
    }
}
