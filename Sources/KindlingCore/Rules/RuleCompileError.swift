/// A syntax or type error in one expression, at a UTF-8 offset into the expression's text; the
/// document loader turns it into a `RulesError` at the matching line and column of the file.
struct RuleCompileError: Error, Sendable {
    var message: String
    var offset: Int

    init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }
}
