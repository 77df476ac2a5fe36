import Foundation

/// The readable end-of-run text: one block per report, then the Kindling/Redis ratios.
public enum ReportTable {
    public static func render(_ reports: [ScenarioReport], comparisons: [Comparison]) -> String {
        var lines: [String] = []
        for report in reports {
            let parameters = report.parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            lines.append("== \(report.scenario) · \(report.system) · \(parameters)")
            let width = max(28, (report.measurements.map(\.name.count) + report.latencies.map { $0.name.count + 8 }).max() ?? 0)
            for measurement in report.measurements {
                lines.append("  " + pad(measurement.name, width) + "  " + format(measurement.value) + " " + measurement.unit)
            }
            for latency in report.latencies {
                lines.append(
                    "  " + pad("\(latency.name) latency", width)
                        + "  p50 \(milliseconds(latency.p50))  p90 \(milliseconds(latency.p90))  p99 \(milliseconds(latency.p99))"
                        + "  p99.9 \(milliseconds(latency.p999))  max \(milliseconds(latency.max))  (\(latency.count) samples)"
                )
            }
            var cpu: [String] = []
            if let cores = report.serverCores { cpu.append("server \(String(format: "%.2f", cores)) cores") }
            if let cores = report.harnessCores { cpu.append("harness \(String(format: "%.2f", cores)) cores") }
            if let bytes = report.serverResidentBytes { cpu.append("server resident \(format(Double(bytes) / 1_048_576)) MB") }
            if !cpu.isEmpty { lines.append("  " + pad("cpu", width) + "  " + cpu.joined(separator: ", ")) }
            for check in report.checks {
                lines.append("  " + pad("check: \(check.name)", width) + "  " + (check.passed ? "PASS" : "FAIL") + "  " + check.detail)
            }
        }
        if !comparisons.isEmpty {
            lines.append("== Kindling / Redis, same run")
            let width = comparisons.map(\.name.count).max() ?? 0
            for comparison in comparisons {
                lines.append(
                    "  " + pad(comparison.name, width) + "  kindling " + format(comparison.kindling) + "  redis " + format(comparison.redis)
                        + "  ratio " + String(format: "%.2f", comparison.ratio)
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A number with thousands separators, or two decimals when small.
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        if abs(value) >= 100 {
            let formatter = NumberFormatter()
            formatter.numberStyle = .decimal
            formatter.maximumFractionDigits = 0
            return formatter.string(from: NSNumber(value: value.rounded())) ?? "\(Int(value))"
        }
        return String(format: "%.2f", value)
    }

    private static func milliseconds(_ value: Double) -> String {
        value >= 100 ? "\(Int(value.rounded())) ms" : String(format: "%.2f ms", value)
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
