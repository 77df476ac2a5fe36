/// The namespace's side of its one admission (`AdmissionGate`): what the gate is told of it.
extension Namespace {
    /// The gate for one block of work.
    func admissionGate() -> AdmissionGate {
        AdmissionGate(unserved: role.unserved, standing: role.standing, checkWrites: { self.writeRefusal })
    }

    /// Where the namespace's writes are decided now.
    var standing: AdmissionGate.Standing { role.standing }
}
