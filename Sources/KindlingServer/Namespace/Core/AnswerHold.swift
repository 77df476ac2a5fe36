/// What holding an answer against the budget of requests in progress came to.
enum AnswerHold {
    /// Held until the answer has gone where it waits to be taken.
    case held(BudgetHold)
    /// Sent unheld: there is no budget, or the whole budget could never hold it (refusing it
    /// would have the client ask for it again for ever).
    case unheld
    /// The budget cannot hold it now; the client should retry later.
    case refused

    /// What to keep until the answer has gone (nil when nothing was held).
    var taken: BudgetHold? {
        if case .held(let hold) = self { return hold }
        return nil
    }

    /// Why an answer was refused, for the client.
    static let busy = Refusal.unavailable("The server is holding too many answers in progress; retry later")
}

extension InFlightBudget {
    /// Holds `bytes` of one answer (a REST read's body, an event stream's first event):
    /// refused when the budget cannot hold it now, unheld when it never could.
    func hold(answer bytes: Int) -> AnswerHold {
        guard bytes > 0, bytes <= limit else { return .unheld }
        guard reserve(bytes) else { return .refused }
        return .held(BudgetHold(taken: bytes, from: self))
    }
}
