/// Numbers a document's coverage sites while it loads: the loader names each rule and where its
/// text is, the compiler opens a site before compiling a node and closes it after, and every
/// site closed while another was open becomes that one's part.
///
/// A class, so that the compiler (a value copied into each call) and the loader share one;
/// it lives only while one document loads.
final class RuleCoverageCollector {
    private(set) var sites: [RuleCoverageSite] = []
    /// The sites closed under each site still open, innermost last.
    private var open: [[Int]] = []
    private var rule = ""
    private var text: [UInt8] = []
    /// The document position of each UTF-8 offset of `text` (and of its end).
    private var positions: [RulesSourcePosition] = []

    /// The rule compiled next: its name, its expression and the document position of each of
    /// the expression's UTF-8 offsets, its end included.
    func begin(rule: String, text: String, positions: [RulesSourcePosition]) {
        self.rule = rule
        self.text = Array(text.utf8)
        self.positions = positions
    }

    /// A node of the current rule starts compiling.
    func openSite() { open.append([]) }

    /// The node opened last has compiled: its site, made the parent of the sites closed since.
    func closeSite(_ syntax: RuleSyntax, isBoolean: Bool) -> Int {
        let parts = open.popLast() ?? []
        let start = min(syntax.start, text.count)
        let end = min(max(syntax.end, start), text.count)
        return add(
            RuleCoverageSite(
                rule: rule, text: String(decoding: text[start..<end], as: UTF8.self), start: positions[start], end: positions[end],
                parent: nil, isBoolean: isBoolean),
            parts: parts)
    }

    /// A rule written as a JSON `true` or `false` (not a string) at `position`.
    func literal(rule: String, _ flag: Bool, at position: RulesSourcePosition) -> Int {
        let text = flag ? "true" : "false"
        let end = RulesSourcePosition(line: position.line, column: position.column + text.count)
        return add(RuleCoverageSite(rule: rule, text: text, start: position, end: end, parent: nil, isBoolean: true), parts: [])
    }

    private func add(_ site: RuleCoverageSite, parts: [Int]) -> Int {
        let index = sites.count
        sites.append(site)
        for part in parts { sites[part].parent = index }
        if !open.isEmpty { open[open.count - 1].append(index) }
        return index
    }
}
