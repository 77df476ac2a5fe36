/// Everything a rule can see while it runs: the variables of rules spec §5 for one level of one
/// request, and the evaluator over compiled expressions.
///
/// `keys` is the path being checked and `depth` how much of it the current rule level covers:
/// `data` and `newData` are at `keys[0..<depth]`, and a `$wildcard` reads `keys[i]`.
///
/// Made with the memberwise initializer (`data` starts as `oldRoot`): a custom one built the
/// scope in a temporary and copied it out, retaining and releasing every field per decision.
struct RuleScope {
    var auth: JSONValue
    var oldRoot: Node
    var newTree: RuleNewTree
    var keys: [Key] = []
    var depth = 0
    var now: Double
    var query: Query?
    /// The old node at `keys[0..<dataDepth]` and the new one at `keys[0..<newDataDepth]`: they
    /// are walked down to `depth` only when a rule needs them (`reachData`, `reachNewData`);
    /// `newData` means nothing until `newDataKnown`, since the new tree is never built whole.
    var data: Node
    var newData: Node = .empty
    var dataDepth = 0
    var newDataDepth = 0
    var newDataKnown = false
    /// Where a document loaded for coverage counts its probes; nil when nobody asked (its probes
    /// then only evaluate what they hold).
    var coverage: RuleCoverageTally? = nil

    /// Brings `data` down to `depth`.
    mutating func reachData() {
        while dataDepth < depth {
            if !data.isEmpty { data = data.child(keys[dataDepth]) }
            dataDepth += 1
        }
    }

    /// Brings `newData` down to `depth`: from the new node of a level above when one is known,
    /// else from the old node at `depth` with the write applied there.
    mutating func reachNewData() {
        if !newDataKnown || newDataDepth > depth {
            reachData()
            newData = newTree.node(at: keys, count: depth, old: data)
            newDataDepth = depth
            newDataKnown = true
            return
        }
        while newDataDepth < depth {
            if !newData.isEmpty { newData = newData.child(keys[newDataDepth]) }
            newDataDepth += 1
        }
    }

    /// Brings the scope to the start of the path `keys`.
    mutating func start(at keys: [Key]) {
        self.keys = keys
        depth = 0
        dataDepth = 0
        newDataDepth = 0
        newDataKnown = false
        data = oldRoot
        newData = .empty
    }

    /// Runs a rule: true only when it evaluates to `true`; errors are returned for the trace.
    func check(_ expression: RuleExpression) -> Result<Bool, RuleEvaluationError> {
        do {
            let value = try evaluate(expression)
            if case .bool(true) = value { return .success(true) }
            return .success(false)
        } catch {
            return .failure(error)
        }
    }

    func evaluate(_ expression: RuleExpression) throws(RuleEvaluationError) -> RuleValue {
        switch expression {
        case .constant(let value): return value
        case .auth: return RuleValue(auth)
        case .root: return .snapshot(RuleSnapshot(isNew: false, node: oldRoot, depth: 0))
        case .data: return .snapshot(RuleSnapshot(isNew: false, node: data, depth: depth))
        case .newData: return .snapshot(RuleSnapshot(isNew: true, node: newData, depth: depth))
        case .now: return .number(now)
        case .query: return .query
        case .capture(let index):
            guard index < keys.count else { return .null }
            return .string(keys[index].string)
        case .member(let base, let name): return RuleScope.member(try evaluate(base), name)
        case .computedMember(let base, let index):
            let object = try evaluate(base)
            switch try evaluate(index) {
            case .string(let name): return RuleScope.member(object, name)
            case .number(let number):
                if case .json(.array(let elements)) = object {
                    guard number >= 0, number < Double(elements.count), number == number.rounded() else { return .null }
                    return RuleValue(elements[Int(number)])
                }
                return RuleScope.member(object, RuleValue.jsString(number))
            default: return .null
            }
        case .length(let base):
            guard case .string(let text) = try evaluate(base) else { throw RuleEvaluationError("length of a non-string") }
            return .number(Double(text.utf16.count))
        case .queryProperty(let base, let property):
            guard case .query = try evaluate(base) else { throw RuleEvaluationError("not a query") }
            return property.value(of: query)
        case .snapshotMethod(let base, let method): return try snapshotMethod(try snapshot(base, method.rawValue), method)
        case .child(let base, let path, let tracksLocation):
            return .snapshot(try descend(try snapshot(base, "child"), path, tracksLocation: tracksLocation, "child"))
        case .hasChild(let base, let path):
            return .bool(!(try descend(try snapshot(base, "hasChild"), path, tracksLocation: false, "hasChild")).node.isEmpty)
        case .hasChildren(let base, let names):
            let snapshot = try snapshot(base, "hasChildren")
            var all = true
            for name in names where try descend(snapshot, name, tracksLocation: false, "hasChildren").node.isEmpty { all = false }
            return .bool(all)
        case .stringMethod(let base, let method, let arguments): return try stringMethod(base, method, arguments)
        case .matches(let base, let regex):
            guard case .string(let text) = try evaluate(base) else { throw RuleEvaluationError("matches() on a non-string") }
            return .bool(regex.matches(text))
        case .not(let operand):
            guard case .bool(let flag) = try evaluate(operand) else { throw RuleEvaluationError("! on a non-boolean") }
            return .bool(!flag)
        case .negate(let operand):
            guard case .number(let number) = try evaluate(operand) else { throw RuleEvaluationError("- on a non-number") }
            return .number(-number)
        case .binary(let op, let left, let right): return try RuleScope.binary(op, try evaluate(left), try evaluate(right))
        case .and(let operands):
            for operand in operands {
                guard case .bool(let flag) = try evaluate(operand) else { throw RuleEvaluationError("&& on a non-boolean") }
                if !flag { return .bool(false) }
            }
            return .bool(true)
        case .or(let operands):
            for operand in operands {
                guard case .bool(let flag) = try evaluate(operand) else { throw RuleEvaluationError("|| on a non-boolean") }
                if flag { return .bool(true) }
            }
            return .bool(false)
        case .conditional(let test, let yes, let no):
            guard case .bool(let flag) = try evaluate(test) else { throw RuleEvaluationError("?: on a non-boolean") }
            return try evaluate(flag ? yes : no)
        case .probe(let site, let inner):
            guard let coverage else { return try evaluate(inner) }
            let value: RuleValue
            do {
                value = try evaluate(inner)
            } catch {
                coverage.record(site, .error(error.message))
                throw error
            }
            coverage.record(site, RuleCoverageValue(value, keys: keys))
            return value
        }
    }

    private func snapshot(_ base: RuleExpression, _ method: String) throws(RuleEvaluationError) -> RuleSnapshot {
        guard case .snapshot(let snapshot) = try evaluate(base) else { throw RuleEvaluationError("\(method)() on a non-snapshot") }
        return snapshot
    }

    /// `name` on a value whose type is known only now: members of `auth` objects, `length` of a
    /// string; anything on null (or without such a member) is null.
    static func member(_ object: RuleValue, _ name: String) -> RuleValue {
        switch object {
        case .json(let json):
            if case .array(let elements) = json {
                if name == "length" { return .number(Double(elements.count)) }
                guard let index = arrayIndex(name), index < elements.count else { return .null }
                return RuleValue(elements[index])
            }
            return json[name].map(RuleValue.init) ?? .null
        case .string(let text): return name == "length" ? .number(Double(text.utf16.count)) : .null
        default: return .null
        }
    }

    /// The element number a member name is, as JavaScript reads one: `0`, or digits without a
    /// leading zero (so `"01"`, `"+1"` and `"-0"` name no element). At most nine digits, which
    /// is past any array a token can hold.
    static func arrayIndex(_ name: String) -> Int? {
        let digits = name.utf8
        guard (1...9).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        guard digits.first != 0x30 || digits.count == 1 else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// The snapshot at `path` below `snapshot`. A computed path must be a string; a single key
    /// (the usual `child($uid)`, `child(auth.uid)`) is looked up without splitting.
    private func descend(
        _ snapshot: RuleSnapshot,
        _ path: RuleChildPath,
        tracksLocation: Bool,
        _ method: String
    ) throws(RuleEvaluationError) -> RuleSnapshot {
        switch path {
        case .keys(let keys): return snapshot.child(keys, tracksLocation: tracksLocation)
        case .expression(.capture(let index)) where index < keys.count:
            // `child($wildcard)`: the path's own key, never empty and without a `/`, is used as
            // it is instead of being made again from its text.
            return tracksLocation ? snapshot.child([keys[index]], tracksLocation: true) : snapshot.child(keys[index])
        case .expression(let expression):
            guard case .string(let text) = try evaluate(expression) else {
                throw RuleEvaluationError("\(method)() expects a string argument")
            }
            if !tracksLocation, !text.utf8.contains(UInt8(ascii: "/")) {
                return text.isEmpty ? snapshot : snapshot.child(Key(unchecked: text))
            }
            return snapshot.child(RuleChildPath.keys(text), tracksLocation: tracksLocation)
        }
    }

    private func snapshotMethod(_ snapshot: RuleSnapshot, _ method: RuleSnapshotMethod) throws(RuleEvaluationError) -> RuleValue {
        switch method {
        case .val: return snapshot.value
        case .exists: return .bool(!snapshot.node.isEmpty)
        case .hasChildren: return .bool(snapshot.hasChildren)
        case .getPriority: return snapshot.node.priority.map { RuleValue(Leaf($0)) } ?? .null
        case .isNumber:
            if case .number? = snapshot.node.leaf { return .bool(true) }
            return .bool(false)
        case .isString:
            if case .string? = snapshot.node.leaf { return .bool(true) }
            return .bool(false)
        case .isBoolean:
            if case .bool? = snapshot.node.leaf { return .bool(true) }
            return .bool(false)
        case .parent: return .snapshot(try parent(of: snapshot))
        }
    }

    /// The parent location, in the same tree; an error at the root.
    private func parent(of snapshot: RuleSnapshot) throws(RuleEvaluationError) -> RuleSnapshot {
        var depth = snapshot.depth
        var extra = snapshot.extra
        if extra.isEmpty {
            guard depth > 0 else { throw RuleEvaluationError("parent() of the root") }
            depth -= 1
        } else {
            extra.removeLast()
        }
        if snapshot.isNew {
            let location = Array(keys[0..<depth]) + extra
            let node = newTree.node(at: location, count: location.count, old: nil)
            return RuleSnapshot(isNew: true, node: node, depth: depth, extra: extra)
        }
        var node = oldRoot
        for key in keys[0..<depth] where !node.isEmpty { node = node.child(key) }
        for key in extra where !node.isEmpty { node = node.child(key) }
        return RuleSnapshot(isNew: snapshot.isNew, node: node, depth: depth, extra: extra)
    }

    private func stringMethod(
        _ base: RuleExpression,
        _ method: RuleStringMethod,
        _ arguments: [RuleExpression]
    ) throws(RuleEvaluationError) -> RuleValue {
        guard case .string(let text) = try evaluate(base) else { throw RuleEvaluationError("\(method.rawValue)() on a non-string") }
        func argument(_ index: Int) throws(RuleEvaluationError) -> String {
            guard case .string(let value) = try evaluate(arguments[index]) else {
                throw RuleEvaluationError("\(method.rawValue)() expects a string argument")
            }
            return value
        }
        switch method {
        case .contains:
            let part = try argument(0)
            return .bool(part.isEmpty || RuleScope.range(of: part, in: text) != nil)
        case .beginsWith: return .bool(text.utf8.starts(with: try argument(0).utf8))
        case .endsWith: return .bool(text.utf8.reversed().starts(with: try argument(0).utf8.reversed()))
        case .replace: return .string(try RuleScope.replacingAll(try argument(0), with: try argument(1), in: text))
        case .toLowerCase: return .string(text.lowercased())
        case .toUpperCase: return .string(text.uppercased())
        case .matches: throw RuleEvaluationError("matches() needs a regular expression")
        }
    }

    /// The byte offset of the first occurrence of `part` in `text` (exact UTF-8 bytes).
    static func range(of part: String, in text: String) -> Int? {
        let haystack = Array(text.utf8)
        let needle = Array(part.utf8)
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = 0
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// Every occurrence replaced (unlike JavaScript's `replace`); an empty pattern changes nothing.
    /// A result longer than any stored string is an error, so chained replacements cannot grow
    /// a value without bound.
    static func replacingAll(_ part: String, with replacement: String, in text: String) throws(RuleEvaluationError) -> String {
        let haystack = Array(text.utf8)
        let needle = Array(part.utf8)
        guard !needle.isEmpty else { return text }
        var result: [UInt8] = []
        var index = 0
        while index < haystack.count {
            if index + needle.count <= haystack.count, haystack[index..<(index + needle.count)].elementsEqual(needle) {
                result.append(contentsOf: replacement.utf8)
                index += needle.count
                guard result.count <= Node.maxStringBytes else {
                    throw RuleEvaluationError("replace() would make a string over \(Node.maxStringBytes) bytes")
                }
            } else {
                result.append(haystack[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func binary(_ op: RuleBinaryOperator, _ left: RuleValue, _ right: RuleValue) throws(RuleEvaluationError) -> RuleValue {
        switch op {
        case .equal: return .bool(RuleValue.strictlyEqual(left, right))
        case .notEqual: return .bool(!RuleValue.strictlyEqual(left, right))
        case .add:
            switch (left, right) {
            case let (.number(l), .number(r)): return .number(l + r)
            case let (.string(l), .string(r)):
                guard l.utf8.count + r.utf8.count <= Node.maxStringBytes else {
                    throw RuleEvaluationError("+ would make a string over \(Node.maxStringBytes) bytes")
                }
                return .string(l + r)
            case let (.string(l), .number(r)): return .string(l + RuleValue.jsString(r))
            case let (.number(l), .string(r)): return .string(RuleValue.jsString(l) + r)
            default: throw RuleEvaluationError("+ needs numbers or strings, got \(left.typeName) and \(right.typeName)")
            }
        case .subtract, .multiply, .divide, .remainder:
            guard case .number(let l) = left, case .number(let r) = right else {
                throw RuleEvaluationError("\(op.rawValue) needs two numbers, got \(left.typeName) and \(right.typeName)")
            }
            switch op {
            case .subtract: return .number(l - r)
            case .multiply: return .number(l * r)
            case .divide: return .number(r == 0 ? .nan : l / r)
            default: return .number(l.truncatingRemainder(dividingBy: r))
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let order: Int
            switch (left, right) {
            case let (.number(l), .number(r)):
                guard !l.isNaN, !r.isNaN else { return .bool(false) }
                order = l < r ? -1 : (l > r ? 1 : 0)
            case let (.string(l), .string(r)): order = UTF16Order.compare(l, r)
            default:
                throw RuleEvaluationError("\(op.rawValue) needs two numbers or two strings, got \(left.typeName) and \(right.typeName)")
            }
            switch op {
            case .less: return .bool(order < 0)
            case .lessOrEqual: return .bool(order <= 0)
            case .greater: return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        }
    }
}
