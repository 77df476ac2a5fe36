/// What holding an answer against the budget of requests in progress came to.
enum AnswerHold {
    /// Held until its connection's event loop has taken it.
    case held(BudgetHold)
    /// Sent unheld: there is no budget, or the whole budget could never hold it (refusing it
    /// would have the client ask for it again for ever).
    case unheld
    /// The budget cannot hold it now; the client should retry later.
    case refused
}
