/// What a namespace does with one request, as its one gate (`AdmissionGate`) says, before the
/// checkpoint (`NamespaceState.apply`) decides it.
enum Admission: Sendable {
    /// Answered with this refusal and counted as refused; nothing is decided.
    case refuse(Refusal)
    /// A follower's client's write, sent to the namespace's leader, which decides and counts it.
    case forward
    /// Decided here, by the checkpoint.
    case decide
}
