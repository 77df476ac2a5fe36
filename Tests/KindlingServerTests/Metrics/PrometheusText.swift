import KindlingTesting

/// A strict reader of the Prometheus text exposition format (version 0.0.4), for the tests:
/// every line must be a `# HELP`, a `# TYPE` or a sample of a family whose `# TYPE` came
/// before it; names, label syntax, escapes and values are checked. Anything else is an error
/// naming the line.
struct PrometheusText {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct ParseError: Error, CustomStringConvertible {
        var line: Int
        var reason: String
        var description: String { "line \(line): \(reason)" }
    }

    private(set) var types: [String: String] = [:]
    private(set) var samples: [Sample] = []

    init(_ text: String) throws {
        guard text.isEmpty || text.hasSuffix("\n") else { throw ParseError(line: 0, reason: "the text does not end with a newline") }
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let line = String(raw)
            let number = index + 1
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ", omittingEmptySubsequences: false)
                guard parts.count == 2, PrometheusText.isName(String(parts[0])),
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(String(parts[1]))
                else { throw ParseError(line: number, reason: "bad TYPE line: \(line)") }
                guard types[String(parts[0])] == nil else { throw ParseError(line: number, reason: "second TYPE for \(parts[0])") }
                types[String(parts[0])] = String(parts[1])
            } else if line.hasPrefix("# HELP ") {
                guard let name = line.dropFirst(7).split(separator: " ").first, PrometheusText.isName(String(name)) else {
                    throw ParseError(line: number, reason: "bad HELP line: \(line)")
                }
            } else if line.hasPrefix("#") || line.isEmpty {
                throw ParseError(line: number, reason: "unexpected line: \(line)")
            } else {
                let sample = try PrometheusText.sample(line, number: number)
                guard let family = family(of: sample.name) else {
                    throw ParseError(line: number, reason: "sample of no declared family: \(sample.name)")
                }
                if types[family] == "histogram", sample.name.hasSuffix("_bucket"), sample.labels["le"] == nil {
                    throw ParseError(line: number, reason: "histogram bucket without le")
                }
                samples.append(sample)
            }
        }
    }

    /// The family a sample belongs to: its own name, or for a histogram its name less
    /// `_bucket`, `_sum` or `_count`.
    private func family(of name: String) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" || types[base] == "summary" { return base }
        }
        return nil
    }

    /// The value of the one sample named `name` with exactly these labels, or nil.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// Every sample named `name`.
    func all(_ name: String) -> [Sample] { samples.filter { $0.name == name } }

    static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.properties.isAlphabetic && first.isASCII || first == "_" || first == ":" else {
            return false
        }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == ":") }
    }

    private static func sample(_ line: String, number: Int) throws -> Sample {
        var rest = Substring(line)
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = String(rest[..<nameEnd])
        guard isName(name) else { throw ParseError(line: number, reason: "bad metric name in \(line)") }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "=") else { throw ParseError(line: number, reason: "label without = in \(line)") }
                let label = String(rest[..<equals])
                guard isName(label), !label.contains(":") else { throw ParseError(line: number, reason: "bad label name \(label)") }
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { throw ParseError(line: number, reason: "unquoted label value in \(line)") }
                rest = rest.dropFirst()
                var value = ""
                while true {
                    guard let character = rest.first else { throw ParseError(line: number, reason: "unterminated label value in \(line)") }
                    rest = rest.dropFirst()
                    if character == "\"" { break }
                    if character == "\\" {
                        switch rest.first {
                        case "\\"?: value.append("\\")
                        case "\""?: value.append("\"")
                        case "n"?: value.append("\n")
                        default: throw ParseError(line: number, reason: "bad escape in \(line)")
                        }
                        rest = rest.dropFirst()
                    } else {
                        value.append(character)
                    }
                }
                guard labels.updateValue(value, forKey: label) == nil else { throw ParseError(line: number, reason: "label \(label) twice") }
                if rest.first == "," {
                    rest = rest.dropFirst()
                } else if rest.first != "}" {
                    throw ParseError(line: number, reason: "expected , or } in \(line)")
                }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw ParseError(line: number, reason: "no space before the value in \(line)") }
        let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard (1...2).contains(fields.count) else { throw ParseError(line: number, reason: "bad value field in \(line)") }
        let text = String(fields[0])
        let value: Double
        switch text {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let parsed = Double(text), text.allSatisfy({ "0123456789.eE+-".contains($0) }) else {
                throw ParseError(line: number, reason: "bad value \(text)")
            }
            value = parsed
        }
        if fields.count == 2, Int64(fields[1]) == nil { throw ParseError(line: number, reason: "bad timestamp in \(line)") }
        return Sample(name: name, labels: labels, value: value)
    }
}

extension PrometheusText {
    /// `GET /.metrics` of the server on `port`, parsed.
    static func scrape(port: Int) async throws -> PrometheusText {
        try PrometheusText(try await TestHTTPConnection.request(port: port, "GET", "/.metrics").text)
    }

    /// The bytes of unfinished requests the server holds (`kindling_unfinished_bytes`).
    static func unfinishedBytes(port: Int) async throws -> Double {
        try await scrape(port: port).value("kindling_unfinished_bytes") ?? 0
    }

    /// The bytes waiting for realtime readers that fell behind (`kindling_backlog_bytes`): above
    /// 0 once a session has more waiting than its pause mark, and so has stopped reading its
    /// client's requests until the client catches up.
    static func backlogBytes(port: Int) async throws -> Double {
        try await scrape(port: port).value("kindling_backlog_bytes") ?? 0
    }

    /// How many requests of `action` the server on `port` has decided with `outcome` so far
    /// (`kindling_requests_total`; 0 before the first): the tests wait for it to know a
    /// request reached its namespace.
    static func requests(port: Int, _ action: String, outcome: String = "ok") async throws -> Double {
        try await scrape(port: port).value("kindling_requests_total", ["action": action, "outcome": outcome]) ?? 0
    }
}
