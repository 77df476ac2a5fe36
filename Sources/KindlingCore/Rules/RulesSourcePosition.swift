/// A place in a rules document's text: 1-based line and column (columns count characters).
struct RulesSourcePosition: Sendable, Equatable {
    var line: Int
    var column: Int
}
