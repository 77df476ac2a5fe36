import KindlingCore

/// One read or write run against security rules as a chosen `auth`, for the console's rules
/// simulator (`POST /.settings/rules/simulate.json`, admin only): nothing is read or written,
/// the answer says whether the rules allow it and which rule decided, from the rules' explain
/// trace.
///
/// The body is `{"path": "/a/b", "op": "read"|"write", "data": <new value, for a write>,
/// "auth": <object or null>, "rules": <rules text, optional: the namespace's own when absent>}`.
struct RulesSimulation: Sendable {
    enum Operation: Sendable {
        case read
        /// A set of this value (null removes).
        case write(JSONValue)
    }

    var path: Path
    var operation: Operation
    /// The rules' `auth`: an object, or null for a signed-out user.
    var auth: JSONValue
    /// Rules text to try instead of the rules in force (a draft in the editor), loaded by the
    /// namespace once it has checked the caller may simulate.
    var rulesText: String?

    init(body: [UInt8]) throws(RESTError) {
        let json: JSONValue
        do throws(ValidationError) {
            json = try JSONParser.parse(body)
        } catch {
            throw RESTError(error)
        }
        guard case .string(let pathText)? = json["path"] else { throw RESTError(.badRequest, "A simulation needs a \"path\" string") }
        do throws(ValidationError) {
            path = try Path(pathText)
        } catch {
            throw RESTError(error)
        }
        switch json["op"] {
        case .string("read")?: operation = .read
        case .string("write")?: operation = .write(json["data"] ?? .null)
        default: throw RESTError(.badRequest, "\"op\" must be \"read\" or \"write\"")
        }
        switch json["auth"] {
        case nil, .null?: auth = .null
        case .object(let members)?: auth = .object(members)
        default: throw RESTError(.badRequest, "\"auth\" must be an object or null")
        }
        switch json["rules"] {
        case nil, .null?: rulesText = nil
        case .string(let text)?: rulesText = text
        default: throw RESTError(.badRequest, "\"rules\" must be the rules text")
        }
    }

    /// Decides the operation under `document` against the data `root`, at time `now` (ms since
    /// the epoch), with the trace.
    func run(rules document: RulesDocument, root: Node, now: Int64) throws(ValidationError) -> RuleDecision {
        switch operation {
        case .read:
            return document.canRead(path, auth: auth, root: root, query: nil, now: now, explain: true)
        case .write(let value):
            let write = try DataTree(root: root).resolveSet(path, value, serverValues: ServerValues(timestamp: Double(now)))
            return document.canWrite(write, auth: auth, old: root, now: now, explain: true)
        }
    }

    /// `{"allowed": true|false, "explanation": ["<one line per rule evaluated>", ..., "<why>"]}`.
    static func encode(_ decision: RuleDecision) -> [UInt8] {
        let body = JSONValue.object([
            JSONMember("allowed", .bool(decision.allowed)),
            JSONMember("explanation", .array(decision.trace.map { .string($0) })),
        ])
        return Array(JSONWriter.string(body).utf8)
    }
}
