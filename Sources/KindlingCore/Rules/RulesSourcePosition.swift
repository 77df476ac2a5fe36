/// A place in a rules document's text: 1-based line and column (columns count characters).
public struct RulesSourcePosition: Sendable, Equatable, Hashable, Comparable {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public static func < (lhs: RulesSourcePosition, rhs: RulesSourcePosition) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}
