/// A type-checked rule expression, compiled once when the rules load and then evaluated for
/// every request. Every decision that can be made statically (which method, which query
/// property, constant child paths, regular expressions) is made here.
indirect enum RuleExpression: Sendable {
    case constant(RuleValue)
    case auth
    case root
    case data
    case newData
    case now
    case query
    /// A `$wildcard`: the key at this index of the path being checked.
    case capture(Int)
    /// `x.name` on a value of unknown type (`auth` and its members).
    case member(RuleExpression, String)
    /// `x[expression]` on a value of unknown type.
    case computedMember(RuleExpression, RuleExpression)
    /// `s.length` on a string (or a value used as one).
    case length(RuleExpression)
    case queryProperty(RuleExpression, RuleQueryProperty)
    case snapshotMethod(RuleExpression, RuleSnapshotMethod)
    /// `snapshot.child(path)`. `tracksLocation` is false when the rule never calls `parent()`,
    /// so the snapshot need not remember where it is (and nothing is allocated for that).
    case child(RuleExpression, RuleChildPath, tracksLocation: Bool)
    case hasChild(RuleExpression, RuleChildPath)
    /// `snapshot.hasChildren([a, b, …])`
    case hasChildren(RuleExpression, [RuleChildPath])
    case stringMethod(RuleExpression, RuleStringMethod, [RuleExpression])
    case matches(RuleExpression, RuleRegex)
    case not(RuleExpression)
    case negate(RuleExpression)
    case binary(RuleBinaryOperator, RuleExpression, RuleExpression)
    /// `a && b && …`, evaluated left to right until one is false.
    case and([RuleExpression])
    /// `a || b || …`, evaluated left to right until one is true.
    case or([RuleExpression])
    case conditional(RuleExpression, RuleExpression, RuleExpression)
    /// The expression of rules coverage's site number `site` (`RuleCoverageSite`): its
    /// evaluations and values are counted. Only a document loaded for coverage has these, so
    /// evaluating any other meets none.
    case probe(site: Int, RuleExpression)
}
