// TEMPORARY LOCAL STUB (never committed): the rules helper's branch replaces this file.
public struct RulesDocument: Sendable {
    public let source: String
    let allowAll: Bool
    public static func parse(_ text: String) throws(RulesError) -> RulesDocument {
        if text.contains("\"rules\": {}") || text.contains("\"rules\":{}") { return RulesDocument(source: text, allowAll: false) }
        if text.contains("bad") { throw RulesError(message: "bad", rulePath: "", line: 1, column: 1) }
        return RulesDocument(source: text, allowAll: !text.contains("false"))
    }
    public static let open = RulesDocument(source: #"{"rules":{".read":true,".write":true}}"#, allowAll: true)
    public var indexDeclarations: [RuleIndexDeclaration] { [] }
    public func canRead(_ path: Path, auth: JSONValue, root: Node, query: Query?, now: Int64, explain: Bool = false) -> RuleDecision {
        RuleDecision(allowed: allowAll, trace: explain ? ["stub"] : [])
    }
    public func canWrite(_ write: Write, auth: JSONValue, old: Node, new: Node, now: Int64, explain: Bool = false) -> RuleDecision {
        RuleDecision(allowed: allowAll, trace: explain ? ["stub"] : [])
    }
}
public struct RuleDecision: Sendable {
    public let allowed: Bool
    public let trace: [String]
}
public struct RulesError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let rulePath: String
    public let line: Int
    public let column: Int
    public var description: String { "\(rulePath) (line \(line), column \(column)): \(message)" }
}
public struct RuleIndexDeclaration: Sendable, Equatable { public let path: [String]; public let on: [String] }
extension RulesDocument { public static let locked = RulesDocument(source: #"{"rules":{".read":false,".write":false}}"#, allowAll: false) }
