/// A table drawn with box characters, laid out as the Firebase CLI's report draws its tables
/// (cli-table3's defaults): each column as wide as its widest cell plus a space either side,
/// cells aligned left, a rule between every two rows. With `colour`, the head is yellow and the
/// rules grey (ANSI codes), as on a terminal.
struct TextTable {
    var head: [String]
    var rows: [[String]] = []
    var colour = false

    func render() -> String {
        let all = [head] + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func rule(_ left: String, _ middle: String, _ right: String) -> String {
            border(left + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: middle) + right)
        }
        var lines = [rule("┌", "┬", "┐")]
        for (index, row) in all.enumerated() {
            if index > 0 { lines.append(rule("├", "┼", "┤")) }
            var line = border("│")
            for column in 0..<columns {
                let cell = column < row.count ? row[column] : ""
                let padded = " " + cell + String(repeating: " ", count: widths[column] - cell.count) + " "
                line += (index == 0 && colour ? "\u{1B}[33m" + padded + "\u{1B}[39m" : padded) + border("│")
            }
            lines.append(line)
        }
        lines.append(rule("└", "┴", "┘"))
        return lines.joined(separator: "\n")
    }

    private func border(_ text: String) -> String {
        colour ? "\u{1B}[90m" + text + "\u{1B}[39m" : text
    }
}
