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

    /// The cluster and the write to send the leader for a request the gate forwards. Nil only
    /// should the gate and the namespace disagree (no cluster, or not a write): the door then
    /// refuses the request as not led here; it never decides it on a follower.
    func forwarding(_ operation: Operation, by caller: Caller) -> (node: ClusterNode, write: ForwardedWrite)? {
        guard let cluster, let origin = caller.forwardedOrigin,
            let write = ForwardedWrite(operation, auth: state.auth(of: caller), origin: origin)
        else { return nil }
        return (cluster, write)
    }

}
