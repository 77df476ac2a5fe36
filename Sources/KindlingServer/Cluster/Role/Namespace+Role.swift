/// The namespace's side of its role (`NamespaceRole`): the one way the role changes.
extension Namespace {
    /// Moves the role on by `event` (`NamespaceRole.handle`) and keeps the projections every
    /// block reads (`standing`, `unserved`, `replicated`); returns the actions the shell
    /// carries out.
    func changeRole(_ event: Role.Event) -> [Role.Action] {
        let actions = role.handle(event)
        standing = role.standing
        unserved = role.unserved
        replicated = role.leadership?.log
        return actions
    }

    /// Changes the leader's own marks (`NamespaceRole.updateLeadership`); the projections stay.
    func updateLeadership(_ body: (inout Leadership) -> Void) {
        role.updateLeadership(body)
    }
}
