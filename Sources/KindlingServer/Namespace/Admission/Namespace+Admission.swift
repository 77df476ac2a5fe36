/// The namespace's side of its one admission (`AdmissionGate`): what the gate is told of it.
extension Namespace {
    /// The gate for one block of work.
    func admissionGate() -> AdmissionGate {
        AdmissionGate(unserved: unserved, standing: standing)
    }

    /// Asks `gate` about a request of `kind` from `caller` (see `AdmissionGate.admit`).
    func admit(_ kind: AdmissionGate.Kind, from caller: Caller, forgotten: Bool = false, through gate: inout AdmissionGate) -> Admission {
        gate.admit(kind, from: caller, forgotten: forgotten) { writeRefusal }
    }

}
