/// Type-checks a parsed rule and compiles it into a `RuleExpression`, refusing what live
/// Firebase refuses when rules are deployed (rules spec §4.1).
struct RuleCompiler {
    /// The kind of rule being compiled: `.read` rules have no `newData`.
    let allowsNewData: Bool
    /// The `$wildcards` in scope, with the index of the path key each one captures.
    let captures: [String: Int]
    /// True when the rule calls `parent()` somewhere, so snapshots must know their location.
    private var tracksLocation = true
    /// Numbers each node for rules coverage and wraps its expression in a probe; nil when the
    /// document is not loaded for coverage.
    let coverage: RuleCoverageCollector?

    init(allowsNewData: Bool, captures: [String: Int], coverage: RuleCoverageCollector? = nil) {
        self.allowsNewData = allowsNewData
        self.captures = captures
        self.coverage = coverage
    }

    /// Parses and compiles `text`, which must be a boolean expression.
    func compile(_ text: String) throws(RuleCompileError) -> CompiledRule {
        let syntax = try RuleParser.parse(text)
        var compiler = self
        // Coverage reports where each snapshot is, so under it every snapshot keeps its location.
        compiler.tracksLocation = coverage != nil || RuleCompiler.contains(syntax) { RuleCompiler.methodName($0) == "parent" }
        let (expression, type) = try compiler.compile(syntax)
        guard type == .boolean else { throw RuleCompileError("Expression must evaluate to a boolean.", at: syntax.offset) }
        return CompiledRule(
            source: text, expression: expression,
            usesData: RuleCompiler.contains(syntax) { if case .identifier("data") = $0.kind { true } else { false } },
            usesNewData: RuleCompiler.contains(syntax) { if case .identifier("newData") = $0.kind { true } else { false } })
    }

    /// The name of the method `syntax` calls (`x.name()` or `x['name']()`), if it is a call.
    static func methodName(_ syntax: RuleSyntax) -> String? {
        guard case .call(let callee, _) = syntax.kind else { return nil }
        if case .member(_, let member) = callee.kind { return member }
        if case .computed(_, let index) = callee.kind, case .string(let member) = index.kind { return member }
        return nil
    }

    /// True when `syntax` or any part of it satisfies `test`.
    static func contains(_ syntax: RuleSyntax, where test: (RuleSyntax) -> Bool) -> Bool {
        if test(syntax) { return true }
        switch syntax.kind {
        case .number, .string, .bool, .null, .regex, .identifier: return false
        case .member(let base, _): return contains(base, where: test)
        case .computed(let base, let index): return contains(base, where: test) || contains(index, where: test)
        case .call(let callee, let arguments):
            return contains(callee, where: test) || arguments.contains { contains($0, where: test) }
        case .array(let elements): return elements.contains { contains($0, where: test) }
        case .unary(_, let operand): return contains(operand, where: test)
        case .binary(_, let left, let right):
            return contains(left, where: test) || contains(right, where: test)
        case .logical(_, let operands): return operands.contains { contains($0, where: test) }
        case .conditional(let a, let b, let c): return contains(a, where: test) || contains(b, where: test) || contains(c, where: test)
        }
    }

    /// Compiles one node, in a probe of its own coverage site when coverage is on.
    private func compile(_ syntax: RuleSyntax) throws(RuleCompileError) -> (RuleExpression, RuleType) {
        guard let coverage else { return try compileNode(syntax) }
        coverage.openSite()
        let (expression, type) = try compileNode(syntax)
        let site = coverage.closeSite(syntax, isBoolean: type == .boolean)
        return (.probe(site: site, expression), type)
    }

    private func compileNode(_ syntax: RuleSyntax) throws(RuleCompileError) -> (RuleExpression, RuleType) {
        let offset = syntax.offset
        switch syntax.kind {
        case .number(let value): return (.constant(.number(value)), .number)
        case .string(let text): return (.constant(.string(text)), .string)
        case .bool(let flag): return (.constant(.bool(flag)), .boolean)
        case .null: return (.constant(.null), .null)
        case .regex:
            throw RuleCompileError("A regular expression may only be the argument of matches()", at: offset)
        case .array:
            throw RuleCompileError("An array may only be the argument of hasChildren()", at: offset)
        case .identifier(let name): return try identifier(name, at: offset)
        case .member(let base, let name):
            let (object, type) = try compile(base)
            return try property(object, type, name, at: offset)
        case .computed(let base, let index):
            let (object, type) = try compile(base)
            if type == .any {
                let (key, keyType) = try compile(index)
                guard keyType.isComparable else { throw RuleCompileError("Invalid property access.", at: index.offset) }
                return (.computedMember(object, key), .any)
            }
            guard case .string(let name) = index.kind else { throw RuleCompileError("Invalid property access.", at: index.offset) }
            return try property(object, type, name, at: offset)
        case .call(let callee, let arguments): return try call(callee, arguments, at: offset)
        case .unary(let symbol, let operand):
            let (value, type) = try compile(operand)
            if symbol == "!" {
                guard type == .boolean else { throw RuleCompileError("Operand of ! must be boolean.", at: operand.offset) }
                return (.not(value), .boolean)
            }
            guard type == .number || type.isFuzzy else {
                throw RuleCompileError("Operand of - must be a number, not \(type).", at: operand.offset)
            }
            return (.negate(value), .number)
        case .logical(let symbol, let operands):
            var compiled: [RuleExpression] = []
            for (index, operand) in operands.enumerated() {
                let (expression, type) = try compile(operand)
                guard type == .boolean else {
                    throw RuleCompileError("\(index == 0 ? "Left" : "Right") operand of \(symbol) must be boolean.", at: operand.offset)
                }
                compiled.append(expression)
            }
            return (symbol == "&&" ? .and(compiled) : .or(compiled), .boolean)
        case .binary(let symbol, let left, let right):
            guard let op = RuleBinaryOperator(symbol: symbol) else { throw RuleCompileError("Unsupported operator \(symbol)", at: offset) }
            return try binary(op, left, right)
        case .conditional(let test, let yes, let no):
            let (t, tType) = try compile(test)
            guard tType == .boolean else { throw RuleCompileError("Test of ?: must be boolean.", at: test.offset) }
            let (y, yType) = try compile(yes)
            let (n, nType) = try compile(no)
            let type: RuleType
            if yType == nType {
                type = yType
            } else if yType.isComparable, nType.isComparable {
                type = .primitive
            } else {
                throw RuleCompileError("The branches of ?: have incompatible types \(yType) and \(nType).", at: offset)
            }
            return (.conditional(t, y, n), type)
        }
    }

    private func identifier(_ name: String, at offset: Int) throws(RuleCompileError) -> (RuleExpression, RuleType) {
        switch name {
        case "auth": return (.auth, .any)
        case "root": return (.root, .snapshot)
        case "data": return (.data, .snapshot)
        case "now": return (.now, .number)
        case "query": return (.query, .query)
        case "newData":
            guard allowsNewData else { throw RuleCompileError("newData is not available in .read rules", at: offset) }
            return (.newData, .snapshot)
        default:
            if let index = captures[name] { return (.capture(index), .string) }
            throw RuleCompileError("\(name) is undefined", at: offset)
        }
    }

    /// `object.name` (or `object['name']`) read as a property, not called; `object` is compiled
    /// and of type `type`.
    private func property(
        _ object: RuleExpression, _ type: RuleType, _ name: String, at offset: Int
    ) throws(RuleCompileError) -> (RuleExpression, RuleType) {
        switch type {
        case .any: return (.member(object, name), .any)
        case .query:
            guard let property = RuleQueryProperty(rawValue: name) else {
                throw RuleCompileError("query: No such property \(name)", at: offset)
            }
            return (.queryProperty(object, property), property.type)
        case .string, .primitive:
            if name == "length" { return (.length(object), .number) }
            throw RuleCompileError("\(type): No such property \(name)", at: offset)
        case .snapshot:
            if RuleSnapshotMethod(rawValue: name) != nil || ["child", "hasChild"].contains(name) {
                throw RuleCompileError("\(name) is a method: call it as \(name)()", at: offset)
            }
            throw RuleCompileError("RuleDataSnapshot: No such method/property \(name)", at: offset)
        default:
            throw RuleCompileError("\(type): No such property \(name)", at: offset)
        }
    }

    private func call(_ callee: RuleSyntax, _ arguments: [RuleSyntax], at offset: Int) throws(RuleCompileError) -> (RuleExpression, RuleType) {
        let base: RuleSyntax
        let name: String
        switch callee.kind {
        case .member(let object, let member):
            base = object
            name = member
        case .computed(let object, let index):
            guard case .string(let member) = index.kind else { throw RuleCompileError("Invalid property access.", at: index.offset) }
            base = object
            name = member
        default:
            throw RuleCompileError("Only methods can be called", at: offset)
        }
        let (object, type) = try compile(base)
        switch type {
        case .snapshot: return try snapshotCall(object, name, arguments, at: offset)
        case .string, .primitive, .any:
            guard let method = RuleStringMethod(rawValue: name) else {
                throw RuleCompileError("\(type == .any ? "string" : type.description): No such method \(name)", at: offset)
            }
            try expectArguments(arguments, method.arity, name, at: offset)
            if method == .matches {
                guard case .regex(let pattern, let flags) = arguments[0].kind else {
                    throw RuleCompileError("matches() expects a regular expression literal", at: arguments[0].offset)
                }
                return (.matches(object, try RuleRegex(pattern: pattern, flags: flags, offset: arguments[0].offset)), .boolean)
            }
            var compiled: [RuleExpression] = []
            for argument in arguments { compiled.append(try stringArgument(argument, name)) }
            return (.stringMethod(object, method, compiled), method.resultType)
        default:
            throw RuleCompileError("\(type): No such method \(name)", at: offset)
        }
    }

    private func snapshotCall(
        _ object: RuleExpression,
        _ name: String,
        _ arguments: [RuleSyntax],
        at offset: Int
    ) throws(RuleCompileError) -> (RuleExpression, RuleType) {
        switch name {
        case "child", "hasChild":
            try expectArguments(arguments, 1, name, at: offset)
            let path = try childPath(arguments[0], name)
            return name == "child" ? (.child(object, path, tracksLocation: tracksLocation), .snapshot) : (.hasChild(object, path), .boolean)
        case "hasChildren" where !arguments.isEmpty:
            try expectArguments(arguments, 1, name, at: offset)
            guard case .array(let elements) = arguments[0].kind else {
                throw RuleCompileError("hasChildren() expects an array literal of child names", at: arguments[0].offset)
            }
            guard !elements.isEmpty else {
                throw RuleCompileError("hasChildren() expects a non-empty array", at: arguments[0].offset)
            }
            var names: [RuleChildPath] = []
            for element in elements { names.append(try childPath(element, name)) }
            return (.hasChildren(object, names), .boolean)
        default:
            guard let method = RuleSnapshotMethod(rawValue: name) else {
                throw RuleCompileError("RuleDataSnapshot: No such method/property \(name)", at: offset)
            }
            try expectArguments(arguments, 0, name, at: offset)
            let type: RuleType
            switch method {
            case .val, .getPriority: type = .primitive
            case .parent: type = .snapshot
            case .exists, .isNumber, .isString, .isBoolean, .hasChildren: type = .boolean
            }
            return (.snapshotMethod(object, method), type)
        }
    }

    private func expectArguments(_ arguments: [RuleSyntax], _ count: Int, _ name: String, at offset: Int) throws(RuleCompileError) {
        guard arguments.count == count else {
            throw RuleCompileError("\(name) expects \(count) argument\(count == 1 ? "" : "s"), but got \(arguments.count) instead", at: offset)
        }
    }

    /// A child path argument: split now when it is a literal, else a string expression.
    /// Under coverage a literal is a counted expression too, evaluated to its text each time: the
    /// same snapshot results, as a computed path splits and skips empty segments alike.
    private func childPath(_ syntax: RuleSyntax, _ method: String) throws(RuleCompileError) -> RuleChildPath {
        if case .string(let text) = syntax.kind {
            guard let coverage else { return .keys(RuleChildPath.keys(text)) }
            coverage.openSite()
            return .expression(.probe(site: coverage.closeSite(syntax, isBoolean: false), .constant(.string(text))))
        }
        return .expression(try stringArgument(syntax, method))
    }

    /// An argument that must be a string: statically when its type is known, else at run time.
    private func stringArgument(_ syntax: RuleSyntax, _ method: String) throws(RuleCompileError) -> RuleExpression {
        let (value, type) = try compile(syntax)
        guard type == .string || type.isFuzzy else {
            throw RuleCompileError("\(method) expects a string argument, got \(type)", at: syntax.offset)
        }
        return value
    }

    private func binary(_ op: RuleBinaryOperator, _ left: RuleSyntax, _ right: RuleSyntax) throws(RuleCompileError) -> (RuleExpression, RuleType) {
        let (l, lType) = try compile(left)
        let (r, rType) = try compile(right)
        let expression = RuleExpression.binary(op, l, r)
        switch op {
        case .add:
            for (type, side) in [(lType, left), (rType, right)] where !(type == .string || type == .number || type.isFuzzy) {
                throw RuleCompileError("Operands of + must be strings or numbers, not \(type).", at: side.offset)
            }
            if lType == .string || rType == .string { return (expression, .string) }
            if lType == .number && rType == .number { return (expression, .number) }
            return (expression, .primitive)
        case .subtract, .multiply, .divide, .remainder:
            for (type, side) in [(lType, left), (rType, right)] where !(type == .number || type.isFuzzy) {
                throw RuleCompileError("Operands of \(op.rawValue) must be numbers, not \(type).", at: side.offset)
            }
            return (expression, .number)
        case .equal, .notEqual:
            for (type, side) in [(lType, left), (rType, right)] where !type.isComparable {
                throw RuleCompileError("A \(type) cannot be compared with \(op.rawValue).", at: side.offset)
            }
            return (expression, .boolean)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            for (type, side) in [(lType, left), (rType, right)]
            where !(type == .string || type == .number || type == .null || type.isFuzzy) {
                throw RuleCompileError("Operands of \(op.rawValue) must be strings or numbers, not \(type).", at: side.offset)
            }
            if !lType.isFuzzy, !rType.isFuzzy, lType != rType {
                throw RuleCompileError("Cannot compare \(lType) with \(rType) using \(op.rawValue).", at: left.offset)
            }
            return (expression, .boolean)
        }
    }
}
