/// Why a rules document was refused when it was loaded: a structural mistake in the document or a
/// syntax or type error in one of its expressions.
///
/// Firebase rejects a whole rules document for one bad rule, so a load either gives a complete
/// `RulesDocument` or one of these; the position lets a person find the mistake in their file.
public struct RulesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A message a person can act on.
    public let message: String
    /// The rule's place in the document, e.g. `rules/users/$uid/.write` (`""` for the document).
    public let rulePath: String
    /// 1-based line in the document text.
    public let line: Int
    /// 1-based column (in characters) in the document text.
    public let column: Int

    public init(message: String, rulePath: String, line: Int, column: Int) {
        self.message = message
        self.rulePath = rulePath
        self.line = line
        self.column = column
    }

    /// `rules/users/$uid/.write (line 4, column 18): <message>`.
    public var description: String {
        let place = "line \(line), column \(column)"
        return rulePath.isEmpty ? "(\(place)): \(message)" : "\(rulePath) (\(place)): \(message)"
    }
}
