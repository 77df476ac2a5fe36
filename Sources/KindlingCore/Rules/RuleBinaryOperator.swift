/// The arithmetic, equality and ordering operators (`&&`, `||` are separate: they short-circuit).
enum RuleBinaryOperator: String, Sendable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"
    case remainder = "%"
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="

    init?(symbol: String) {
        switch symbol {
        case "===": self = .equal
        case "!==": self = .notEqual
        default: self.init(rawValue: symbol)
        }
    }
}
