/// A `matches(/…/)` regular expression: Firebase's subset (rules spec §8), checked when the rules
/// load and matched by search (`/a/` matches `"ba"`), only ever answering true or false.
///
/// The pattern becomes a small NFA program that is run by simulation (every live state advanced
/// in step), so matching costs at most pattern × input steps, whatever the pattern: user data can
/// never make a rule backtrack exponentially.
struct RuleRegex: Sendable {
    /// The largest repeat count and program the loader accepts.
    static let maxRepeat = 1000
    static let maxProgram = 20_000

    /// One character test of a set (`[a-z\d]`) or class (`\w`).
    enum Item: Sendable {
        case range(UInt32, UInt32)
        case digit(Bool)
        case word(Bool)
        case space(Bool)
    }

    struct CharSet: Sendable {
        var negated: Bool
        var items: [Item]
    }

    indirect enum Node: Sendable {
        case scalar(UInt32)
        case any
        case set(CharSet)
        case alternation([[Node]])
        case repetition(Node, min: Int, max: Int?)
    }

    enum Instruction: Sendable {
        case scalar(UInt32)
        case any
        case set(CharSet)
        case split(Int, Int)
        case jump(Int)
        case match
    }

    let source: String
    let caseInsensitive: Bool
    let anchoredStart: Bool
    let anchoredEnd: Bool
    let program: [Instruction]
    /// For a program of at most 64 instructions (most rules' patterns), each instruction's
    /// closure as a bit set: the character tests and matches reachable from it without reading a
    /// character. Matching then keeps its live states in one word and allocates nothing.
    let closures: [UInt64]
    /// The `.match` instructions, as a bit set (when `closures` is used).
    let matchMask: UInt64

    /// Checks `pattern` against the subset and compiles it; `offset` places errors.
    init(pattern: String, flags: String, offset: Int) throws(RuleCompileError) {
        guard flags.isEmpty || flags == "i" else { throw RuleCompileError("Unsupported RegExp flags \(flags).", at: offset) }
        source = "/\(pattern)/\(flags)"
        caseInsensitive = flags == "i"
        var reader = Reader(scalars: Array(pattern.unicodeScalars.map(\.value)), offset: offset)
        anchoredStart = reader.take(UInt32(UInt8(ascii: "^")))
        let alternatives = try reader.alternatives(depth: 0)
        anchoredEnd = reader.take(UInt32(UInt8(ascii: "$")))
        if reader.index < reader.scalars.count {
            let scalar = reader.scalars[reader.index]
            if scalar == UInt32(UInt8(ascii: ")")) { throw RuleCompileError("Unbalanced ')' in a regular expression", at: offset) }
            throw RuleCompileError("'^' and '$' may only start and end a regular expression", at: offset)
        }
        var builder = Builder(caseInsensitive: caseInsensitive)
        try builder.emit(.alternation(alternatives), offset: offset)
        builder.program.append(.match)
        program = builder.program
        (closures, matchMask) = RuleRegex.closureSets(program)
    }

    /// The closure bit sets and the match mask of `program`, or none when it is too long.
    private static func closureSets(_ program: [Instruction]) -> ([UInt64], UInt64) {
        guard program.count <= 64 else { return ([], 0) }
        var matchMask: UInt64 = 0
        var closures: [UInt64] = []
        for start in program.indices {
            var set: UInt64 = 0
            var seen: UInt64 = 0
            var stack = [start]
            while let pc = stack.popLast() {
                guard seen & (1 << UInt64(pc)) == 0 else { continue }
                seen |= 1 << UInt64(pc)
                switch program[pc] {
                case .jump(let target): stack.append(target)
                case .split(let first, let second): stack += [second, first]
                case .match:
                    set |= 1 << UInt64(pc)
                    matchMask |= 1 << UInt64(pc)
                case .scalar, .any, .set: set |= 1 << UInt64(pc)
                }
            }
            closures.append(set)
        }
        return (closures, matchMask)
    }

    /// True when the pattern matches somewhere in `text`.
    func matches(_ text: String) -> Bool {
        closures.isEmpty ? matchesByLists(text) : matchesInWord(text)
    }

    /// `matches` for any program: the live states in lists, each state added once per step.
    func matchesByLists(_ text: String) -> Bool {
        var marks = [Int](repeating: -1, count: program.count)
        var generation = 0
        var current: [Int] = []
        var next: [Int] = []
        var stack: [Int] = []
        addClosure(0, to: &current, marks: &marks, generation: generation, stack: &stack)
        for scalar in text.unicodeScalars {
            if accepts(current, atEnd: false) { return true }
            let value = caseInsensitive ? RuleRegex.fold(scalar.value) : scalar.value
            generation += 1
            next.removeAll(keepingCapacity: true)
            for pc in current {
                let passes: Bool
                switch program[pc] {
                case .scalar(let expected): passes = expected == value
                case .any: passes = !RuleRegex.isLineTerminator(value)
                case .set(let set): passes = RuleRegex.contains(set, scalar.value, caseInsensitive: caseInsensitive)
                case .split, .jump, .match: passes = false
                }
                if passes { addClosure(pc + 1, to: &next, marks: &marks, generation: generation, stack: &stack) }
            }
            if !anchoredStart { addClosure(0, to: &next, marks: &marks, generation: generation, stack: &stack) }
            swap(&current, &next)
            if current.isEmpty { return false }
        }
        return accepts(current, atEnd: true)
    }

    /// `matches` for a program of at most 64 instructions: the same simulation, its live states
    /// one bit each.
    func matchesInWord(_ text: String) -> Bool {
        var current = closures[0]
        for scalar in text.unicodeScalars {
            if !anchoredEnd, current & matchMask != 0 { return true }
            let value = caseInsensitive ? RuleRegex.fold(scalar.value) : scalar.value
            var next: UInt64 = 0
            var live = current & ~matchMask
            while live != 0 {
                let pc = live.trailingZeroBitCount
                live &= live - 1
                let passes: Bool
                switch program[pc] {
                case .scalar(let expected): passes = expected == value
                case .any: passes = !RuleRegex.isLineTerminator(value)
                case .set(let set): passes = RuleRegex.contains(set, scalar.value, caseInsensitive: caseInsensitive)
                case .split, .jump, .match: passes = false
                }
                if passes { next |= closures[pc + 1] }
            }
            if !anchoredStart { next |= closures[0] }
            current = next
            if current == 0 { return false }
        }
        return current & matchMask != 0
    }

    private func accepts(_ threads: [Int], atEnd: Bool) -> Bool {
        guard atEnd || !anchoredEnd else { return false }
        return threads.contains { if case .match = program[$0] { return true } else { return false } }
    }

    /// Adds `pc` and every state reachable from it without reading a character.
    private func addClosure(_ pc: Int, to list: inout [Int], marks: inout [Int], generation: Int, stack: inout [Int]) {
        stack.append(pc)
        while let top = stack.popLast() {
            guard marks[top] != generation else { continue }
            marks[top] = generation
            switch program[top] {
            case .jump(let target): stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            default: list.append(top)
            }
        }
    }

    static func isLineTerminator(_ value: UInt32) -> Bool {
        value == 0x0A || value == 0x0D || value == 0x2028 || value == 0x2029
    }

    static func isSpace(_ value: UInt32) -> Bool {
        switch value {
        case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF: return true
        default: return false
        }
    }

    static func isWord(_ value: UInt32) -> Bool {
        (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) || value == 0x5F
    }

    /// Simple case folding: the lowercase form when it is one scalar.
    static func fold(_ value: UInt32) -> UInt32 {
        if value < 0x80 { return (0x41...0x5A).contains(value) ? value + 0x20 : value }
        guard let scalar = Unicode.Scalar(value) else { return value }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        guard lower.count == 1, let only = lower.first else { return value }
        return only.value
    }

    static func upper(_ value: UInt32) -> UInt32 {
        if value < 0x80 { return (0x61...0x7A).contains(value) ? value - 0x20 : value }
        guard let scalar = Unicode.Scalar(value) else { return value }
        let upper = scalar.properties.uppercaseMapping.unicodeScalars
        guard upper.count == 1, let only = upper.first else { return value }
        return only.value
    }

    static func contains(_ set: CharSet, _ value: UInt32, caseInsensitive: Bool) -> Bool {
        func test(_ value: UInt32) -> Bool {
            set.items.contains { item in
                switch item {
                case .range(let low, let high): return low <= value && value <= high
                case .digit(let positive): return (0x30...0x39).contains(value) == positive
                case .word(let positive): return isWord(value) == positive
                case .space(let positive): return isSpace(value) == positive
                }
            }
        }
        let found = caseInsensitive ? (test(value) || test(fold(value)) || test(upper(value))) : test(value)
        return found != set.negated
    }

    /// Reads the pattern grammar (targaryen's `parser.ne`, which live Firebase agrees with).
    private struct Reader {
        let scalars: [UInt32]
        let offset: Int
        var index = 0

        init(scalars: [UInt32], offset: Int) {
            self.scalars = scalars
            self.offset = offset
        }

        private func error(_ message: String) -> RuleCompileError { RuleCompileError(message, at: offset) }

        private var peek: UInt32? { index < scalars.count ? scalars[index] : nil }

        mutating func take(_ scalar: UInt32) -> Bool {
            guard peek == scalar else { return false }
            index += 1
            return true
        }

        private static func ascii(_ character: Unicode.Scalar) -> UInt32 { character.value }

        /// True when the `$` at `index` is the pattern's last character (the end anchor).
        private var atEndAnchor: Bool { peek == Reader.ascii("$") && index == scalars.count - 1 }

        mutating func alternatives(depth: Int) throws(RuleCompileError) -> [[Node]] {
            guard depth < 50 else { throw error("The regular expression nests too deeply") }
            var result: [[Node]] = []
            while true {
                let sequence = try self.sequence(depth: depth)
                // An empty pattern (`/^$/`) is fine; an empty alternative (`(foo|)`) is not.
                let wholePattern = depth == 0 && result.isEmpty && (peek == nil || atEndAnchor)
                guard !sequence.isEmpty || wholePattern else { throw error("A regular expression may not have an empty alternative") }
                result.append(sequence)
                if !take(Reader.ascii("|")) { return result }
            }
        }

        private mutating func sequence(depth: Int) throws(RuleCompileError) -> [Node] {
            var nodes: [Node] = []
            while let scalar = peek, scalar != Reader.ascii("|"), scalar != Reader.ascii(")"), !atEndAnchor {
                let atom = try self.atom(depth: depth, first: nodes.isEmpty)
                nodes.append(try quantified(atom))
            }
            return nodes
        }

        private mutating func atom(depth: Int, first: Bool) throws(RuleCompileError) -> Node {
            let scalar = scalars[index]
            index += 1
            switch Unicode.Scalar(scalar) {
            case "(":
                let inner = try alternatives(depth: depth + 1)
                guard take(Reader.ascii(")")) else { throw error("Unbalanced '(' in a regular expression") }
                return .alternation(inner)
            case "[": return .set(try set())
            case ".": return .any
            case "\\": return try escape()
            case "^": throw error("'^' may only be the first character of a regular expression")
            case "$": throw error("'$' may only be the last character of a regular expression")
            case "*", "+", "?":
                // Right after `(` or at the very start a quantifier has nothing to repeat, and
                // Firebase reads it literally (`(?:foo)` is the literal `(\?:foo)`).
                guard first else { throw error("Nothing to repeat in a regular expression") }
                return .scalar(scalar)
            default: return .scalar(scalar)
            }
        }

        private mutating func escape() throws(RuleCompileError) -> Node {
            guard let scalar = peek else { throw error("A regular expression may not end with '\\'") }
            index += 1
            switch Unicode.Scalar(scalar) {
            case "d": return .set(CharSet(negated: false, items: [.digit(true)]))
            case "D": return .set(CharSet(negated: false, items: [.digit(false)]))
            case "w": return .set(CharSet(negated: false, items: [.word(true)]))
            case "W": return .set(CharSet(negated: false, items: [.word(false)]))
            case "s": return .set(CharSet(negated: false, items: [.space(true)]))
            case "S": return .set(CharSet(negated: false, items: [.space(false)]))
            default: return .scalar(Reader.escapedScalar(scalar))
            }
        }

        private static func escapedScalar(_ scalar: UInt32) -> UInt32 {
            switch Unicode.Scalar(scalar) {
            case "n": return 0x0A
            case "r": return 0x0D
            case "t": return 0x09
            case "f": return 0x0C
            case "v": return 0x0B
            default: return scalar
            }
        }

        private mutating func set() throws(RuleCompileError) -> CharSet {
            let negated = take(Reader.ascii("^"))
            var items: [Item] = []
            while true {
                guard let scalar = peek else { throw error("Unterminated '[' in a regular expression") }
                index += 1
                if scalar == Reader.ascii("]") { return CharSet(negated: negated, items: items) }
                var low = scalar
                if scalar == Reader.ascii("\\") {
                    guard let escaped = peek else { throw error("Unterminated '[' in a regular expression") }
                    index += 1
                    switch Unicode.Scalar(escaped) {
                    case "d": items.append(.digit(true)); continue
                    case "D": items.append(.digit(false)); continue
                    case "w": items.append(.word(true)); continue
                    case "W": items.append(.word(false)); continue
                    case "s": items.append(.space(true)); continue
                    case "S": items.append(.space(false)); continue
                    default: low = Reader.escapedScalar(escaped)
                    }
                }
                if peek == Reader.ascii("-"), index + 1 < scalars.count, scalars[index + 1] != Reader.ascii("]") {
                    index += 1
                    var high = scalars[index]
                    index += 1
                    if high == Reader.ascii("\\") {
                        guard let escaped = peek else { throw error("Unterminated '[' in a regular expression") }
                        index += 1
                        high = Reader.escapedScalar(escaped)
                    }
                    guard low <= high else { throw error("Range out of order in a regular expression set") }
                    items.append(.range(low, high))
                } else {
                    items.append(.range(low, low))
                }
            }
        }

        /// The atom with its quantifier, if one follows; a second quantifier has nothing to repeat.
        private mutating func quantified(_ atom: Node) throws(RuleCompileError) -> Node {
            guard let node = try quantifier(atom) else { return atom }
            if try quantifier(node) != nil { throw error("Nothing to repeat in a regular expression") }
            return node
        }

        private mutating func quantifier(_ atom: Node) throws(RuleCompileError) -> Node? {
            guard let scalar = peek else { return nil }
            switch Unicode.Scalar(scalar) {
            case "*": index += 1; return .repetition(atom, min: 0, max: nil)
            case "+": index += 1; return .repetition(atom, min: 1, max: nil)
            case "?": index += 1; return .repetition(atom, min: 0, max: 1)
            case "{":
                guard let (min, max) = try braces() else { return nil }
                return .repetition(atom, min: min, max: max)
            default: return nil
            }
        }

        /// `{n}`, `{n,}` or `{n,m}` at `index`; nil (nothing read) when the brace is literal.
        private mutating func braces() throws(RuleCompileError) -> (Int, Int?)? {
            var position = index + 1
            func number(_ position: inout Int) -> Int? {
                var value = 0
                var digits = 0
                while position < scalars.count, (0x30...0x39).contains(scalars[position]) {
                    value = min(value * 10 + Int(scalars[position] - 0x30), RuleRegex.maxRepeat + 1)
                    position += 1
                    digits += 1
                }
                return digits > 0 ? value : nil
            }
            guard let low = number(&position) else { return nil }
            var high: Int? = low
            if position < scalars.count, scalars[position] == Reader.ascii(",") {
                position += 1
                high = number(&position)
            }
            guard position < scalars.count, scalars[position] == Reader.ascii("}") else { return nil }
            index = position + 1
            guard low <= RuleRegex.maxRepeat, (high ?? 0) <= RuleRegex.maxRepeat else {
                throw error("A regular expression repeat count is above \(RuleRegex.maxRepeat)")
            }
            if let high, high < low { throw error("A regular expression repeat range is out of order") }
            return (low, high)
        }
    }

    /// Lays the pattern out as an NFA program.
    private struct Builder {
        let caseInsensitive: Bool
        var program: [Instruction] = []

        mutating func emit(_ node: Node, offset: Int) throws(RuleCompileError) {
            guard program.count <= RuleRegex.maxProgram else {
                throw RuleCompileError("The regular expression is too large", at: offset)
            }
            switch node {
            case .scalar(let value): program.append(.scalar(caseInsensitive ? RuleRegex.fold(value) : value))
            case .any: program.append(.any)
            case .set(let set): program.append(.set(set))
            case .alternation(let alternatives):
                var jumps: [Int] = []
                for (position, sequence) in alternatives.enumerated() {
                    let split = program.count
                    let last = position == alternatives.count - 1
                    if !last { program.append(.split(split + 1, -1)) }
                    for item in sequence { try emit(item, offset: offset) }
                    if !last {
                        jumps.append(program.count)
                        program.append(.jump(-1))
                        program[split] = .split(split + 1, program.count)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repetition(let inner, let min, let max):
                for _ in 0..<min { try emit(inner, offset: offset) }
                if let max {
                    var splits: [Int] = []
                    for _ in min..<max {
                        splits.append(program.count)
                        program.append(.split(program.count + 1, -1))
                        try emit(inner, offset: offset)
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    let loop = program.count
                    program.append(.split(loop + 1, -1))
                    try emit(inner, offset: offset)
                    program.append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
        }
    }
}
