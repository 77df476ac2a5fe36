import KindlingCore

/// The rules coverage report as one self-contained HTML page (`GET /.inspect/coverage`): the
/// rules text with every expression highlighted by what it did (never evaluated, only one of
/// `true`/`false`, or evaluated), its count and values in its tooltip, then the totals and the
/// expressions to look at. Everything taken from the rules or the values is escaped; the page has
/// no script.
///
/// Written by hand: no kept library renders HTML, and the page is a few elements.
struct RulesCoveragePage {
    let report: RulesCoverageReport

    var text: String {
        let coverage = report.coverage
        let summary = coverage.summary
        var html = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Rules coverage: \(Self.escape(report.namespace))</title>
            <style>\(Self.style)</style>
            </head>
            <body>
            <h1>Rules coverage of <code>\(Self.escape(report.namespace))</code></h1>
            <p class="totals"><strong>\(summary.evaluated) of \(summary.expressions)</strong> expressions evaluated \
            (\(Self.number(summary.percent))%), <strong>\(summary.outcomesSeen) of \(2 * summary.booleans)</strong> \
            outcomes of boolean expressions seen (\(Self.number(summary.outcomePercent))%).</p>
            <p class="legend"><span class="e miss">never evaluated</span> <span class="e part">only true or only false</span> \
            <span class="e hit">evaluated</span> Hover an expression for its count and the values it returned. Counts are \
            kept since the rules were put in force or last reset; requests by an admin, and any under open rules, evaluate \
            no rule. Lines and columns count from 1.</p>

            """
        html += "<pre class=\"src\">" + highlightedSource() + "</pre>\n"
        html += list(
            "Never evaluated", coverage.unevaluated,
            note: "Each one stands for its parts too."
        ) { coverage.sites[$0].text }
        html += list(
            "Only one outcome", coverage.oneOutcome,
            note: "Boolean expressions that were evaluated but never returned one of true and false."
        ) { index in
            let counts = coverage.counts[index]
            let seen = [true, false].filter { counts.count(of: .bool($0)) > 0 }.map { $0 ? "true" : "false" }
            return coverage.sites[index].text + " — " + (seen.isEmpty ? "no boolean (errors only)" : "only " + seen.joined())
        }
        return html + "</body>\n</html>\n"
    }

    /// The rules text, each expression in a `span` (parts inside their whole), line numbers in
    /// the margin.
    private func highlightedSource() -> String {
        let coverage = report.coverage
        let bytes = Array(report.source.utf8)
        let lineStarts = [0] + bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }.map { $0 + 1 }
        let width = String(lineStarts.count).count
        var depth = Array(repeating: 0, count: coverage.sites.count)
        for index in coverage.sites.indices {
            var parent = coverage.sites[index].parent
            while let next = parent, next < coverage.sites.count, depth[index] <= coverage.sites.count {
                depth[index] += 1
                parent = coverage.sites[next].parent
            }
        }
        // Wholes before their parts: by start, the longer first, the shallower first.
        let spans = coverage.sites.indices.map { index in
            (index, Self.offset(coverage.sites[index].start, bytes, lineStarts), Self.offset(coverage.sites[index].end, bytes, lineStarts))
        }.sorted { ($0.1, -$0.2, depth[$0.0]) < ($1.1, -$1.2, depth[$1.0]) }

        var out = ""
        var line = 1
        var cursor = 0
        func emit(upTo end: Int) {
            guard end > cursor else { return }
            for scalar in String(decoding: bytes[cursor..<end], as: UTF8.self).unicodeScalars {
                if scalar == "\n" {
                    line += 1
                    out += "\n" + Self.lineNumber(line, width: width)
                } else {
                    out += Self.escape(String(scalar))
                }
            }
            cursor = end
        }
        out += Self.lineNumber(1, width: width)
        var open: [Int] = []
        for (index, start, end) in spans {
            while let top = open.last, top <= start {
                emit(upTo: top)
                out += "</span>"
                open.removeLast()
            }
            emit(upTo: start)
            // A part never reaches past its whole.
            open.append(min(max(end, start), open.last ?? bytes.count))
            out += "<span class=\"e \(cssClass(index))\" title=\"\(Self.escape(tooltip(index), attribute: true))\">"
        }
        while let top = open.popLast() {
            emit(upTo: top)
            out += "</span>"
        }
        emit(upTo: bytes.count)
        return out
    }

    private func cssClass(_ index: Int) -> String {
        let counts = report.coverage.counts[index]
        if counts.evaluations == 0 { return "miss" }
        if report.coverage.sites[index].isBoolean, counts.count(of: .bool(true)) == 0 || counts.count(of: .bool(false)) == 0 { return "part" }
        return "hit"
    }

    private func tooltip(_ index: Int) -> String {
        let site = report.coverage.sites[index]
        let counts = report.coverage.counts[index]
        let text = site.text.count > 120 ? String(site.text.prefix(119)) + "…" : site.text
        var lines = [text, site.rule]
        guard counts.evaluations > 0 else { return (lines + ["never evaluated"]).joined(separator: "\n") }
        lines.append("evaluated \(counts.evaluations) time\(counts.evaluations == 1 ? "" : "s"), returned:")
        for entry in counts.values { lines.append("  \(Self.describe(entry.value)) ×\(entry.count)") }
        if counts.otherValues > 0 { lines.append("  other values (not kept) ×\(counts.otherValues)") }
        return lines.joined(separator: "\n")
    }

    /// A section listing `sites`, each at its line and column, with `label`'s text.
    private func list(_ title: String, _ sites: [Int], note: String, label: (Int) -> String) -> String {
        var html = "<h2>\(Self.escape(title)) (\(sites.count))</h2>\n"
        guard !sites.isEmpty else { return html + "<p class=\"none\">None.</p>\n" }
        html += "<p class=\"note\">\(Self.escape(note))</p>\n<table>\n<tr><th>Line:column</th><th>Rule</th><th>Expression</th></tr>\n"
        for index in sites {
            let site = report.coverage.sites[index]
            html += "<tr><td>\(site.start.line):\(site.start.column)</td><td><code>\(Self.escape(site.rule))</code></td>"
            html += "<td><code>\(Self.escape(label(index)))</code></td></tr>\n"
        }
        return html + "</table>\n"
    }

    /// A value as the tooltip shows it.
    static func describe(_ value: RuleCoverageValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number): return JSONWriter.string(.number(number))
        case .nonFinite(let text): return text
        case .string(let text, let truncated): return JSONWriter.string(.string(text)) + (truncated ? "…" : "")
        case .snapshot(let path, let isNew): return "\(isNew ? "new data" : "data") at \(path)"
        case .object: return "an object"
        case .query: return "the query"
        case .error(let message): return "error: \(message)"
        }
    }

    /// The UTF-8 offset of `position` in the text whose bytes are `bytes` (columns count
    /// characters); the end of the text for a position past it.
    static func offset(_ position: RulesSourcePosition, _ bytes: [UInt8], _ lineStarts: [Int]) -> Int {
        guard position.line >= 1, position.line <= lineStarts.count else { return bytes.count }
        var offset = lineStarts[position.line - 1]
        var column = 1
        while column < position.column, offset < bytes.count, bytes[offset] != UInt8(ascii: "\n") {
            offset += 1
            while offset < bytes.count, UTF8.isContinuation(bytes[offset]) { offset += 1 }
            column += 1
        }
        return offset
    }

    static func lineNumber(_ line: Int, width: Int) -> String {
        let text = String(line)
        return "<span class=\"ln\">" + String(repeating: " ", count: max(width - text.count, 0)) + text + " </span>"
    }

    static func number(_ value: Double) -> String { JSONWriter.string(.number(value)) }

    /// `text` safe in HTML text and in a double- or single-quoted attribute (where a line break
    /// is kept as one).
    static func escape(_ text: String, attribute: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n" where attribute: out += "&#10;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static let style = """
        :root { color-scheme: light dark; --page: #fff; --text: #1f2328; --muted: #656d76; --line: #d0d7de;
          --hit: #dafbe1; --part: #fff1c2; --miss: #ffdce0; --focus: #0969da; }
        @media (prefers-color-scheme: dark) { :root { --page: #0d1117; --text: #e6edf3; --muted: #8d96a0; --line: #30363d;
          --hit: #12361f; --part: #3d2e00; --miss: #4c1018; --focus: #4493f8; } }
        body { margin: 1.5rem; background: var(--page); color: var(--text); font: 15px/1.5 system-ui, sans-serif; }
        h1 { font-size: 1.4rem; margin: 0 0 .5rem; } h2 { font-size: 1.1rem; margin: 1.5rem 0 .25rem; }
        .totals { margin: 0 0 .25rem; } .legend, .note, .none { color: var(--muted); margin: .25rem 0 .75rem; }
        pre.src { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; border: 1px solid var(--line);
          border-radius: 6px; padding: .75rem 1rem; overflow-x: auto; }
        .ln { color: var(--muted); background: var(--page); user-select: none; }
        .e { border-radius: 2px; } .hit { background: var(--hit); } .part { background: var(--part); }
        .miss { background: var(--miss); }
        pre .e:hover:not(:has(.e:hover)) { outline: 2px solid var(--focus); }
        .legend .e { padding: 0 .3rem; margin-right: .25rem; color: var(--text); }
        table { border-collapse: collapse; font-size: 14px; } th, td { text-align: left; padding: .2rem .75rem .2rem 0;
          border-bottom: 1px solid var(--line); vertical-align: top; } code { font-family: ui-monospace, monospace; }
        """
}
