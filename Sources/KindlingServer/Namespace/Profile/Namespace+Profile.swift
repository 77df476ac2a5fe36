import KindlingCore
import Logging
import NIOCore
import Synchronization

/// Profiling a namespace (`GET /.settings/profile.json`, admins only), as `firebase
/// database:profile` reads it.
///
/// While at least one profiler listens, the checkpoint notes each operation it decides and each
/// write's broadcast (`NamespaceState.profiling`), and the door that ran them hands the records
/// on with what only it knows (`publishProfile`): when each ran, how long its request waited,
/// the client's address. With nobody profiling, `profile` and the trail are nil: each door
/// checks one of them, and no record is made.
extension Namespace {
    /// Starts sending this namespace's records to `outbound` if `auth` is an admin (the admission
    /// first, as for any request). Answers `.ok`, or the refusal; the stream holds a use of the
    /// namespace until `closeProfile`.
    nonisolated func openProfile(_ id: ConnectionID, as auth: AuthState, outbound: ProfileOutbound, promise: EventLoopPromise<Answer>) {
        run { namespace in
            var gate = namespace.admissionGate()
            var refusal: Refusal?
            if case .refuse(let admission) = namespace.admit(.read, from: .rest(auth), through: &gate) {
                refusal = admission
            } else {
                refusal = namespace.state.refusalOfProfiling(by: auth)
            }
            namespace.state.tally.record(.profile, RequestOutcome(refusal))
            namespace.report()
            if let refusal {
                namespace.release()
                return promise.succeed(.refused(refusal))
            }
            if namespace.profile == nil { namespace.startProfiling() }
            namespace.profile?.profilers[id] = outbound
            namespace.logger.notice("a profiler connected", metadata: ["profiler": "\(id)"])
            promise.succeed(.ok)
        }
    }

    /// Stops sending records to a profiler whose stream ended; profiling stops with the last.
    nonisolated func closeProfile(_ id: ConnectionID) {
        run { namespace in
            guard namespace.profile?.profilers.removeValue(forKey: id) != nil else { return }  // refused
            namespace.logger.notice("a profiler disconnected", metadata: ["profiler": "\(id)"])
            if namespace.profile?.profilers.isEmpty == true { namespace.stopProfiling() }
            namespace.release()
        }
    }

    /// `remote` as a record names it, while the namespace is profiled (nil, and not read,
    /// otherwise): what a connection gives when it attaches.
    nonisolated func profiledAddress(_ remote: @autoclosure () -> SocketAddress?) -> String? {
        guard profiled.load(ordering: .relaxed) else { return nil }
        return ProfileTicket.address(remote())
    }

    private func startProfiling() {
        profile = NamespaceProfile()
        state.profiling = ProfileTrail(clock: ProfileClock.now)
        profiled.store(true, ordering: .relaxed)
        var open: [(ConnectionID, ConnectionOutbound)] = []
        for (connection, outbound) in outbounds {
            if case .webSocket(let realtime) = outbound { open.append((connection, realtime)) }
        }
        learnAddresses(of: open)
    }

    /// Gives a state made anew (a cluster node reading its log again, or loading a snapshot) the
    /// trail again while someone profiles.
    func keepProfiling() {
        if profile != nil, state.profiling == nil { state.profiling = ProfileTrail(clock: ProfileClock.now) }
    }

    private func stopProfiling() {
        profile = nil
        state.profiling = nil
        profiled.store(false, ordering: .relaxed)
    }

    /// Asks the event loops of `connections` for their addresses, one task per loop.
    private func learnAddresses(of connections: [(ConnectionID, ConnectionOutbound)]) {
        var byLoop: [ObjectIdentifier: (outbox: EventLoopOutbox, slots: [(ConnectionID, SessionSlot)])] = [:]
        for (connection, outbound) in connections {
            byLoop[ObjectIdentifier(outbound.outbox), default: (outbound.outbox, [])].slots.append((connection, outbound.slot))
        }
        for (outbox, slots) in byLoop.values {
            outbox.remoteAddresses(of: slots).whenSuccess { found in
                let named = found.compactMap { connection, address in ProfileTicket.address(address).map { (connection, $0) } }
                self.run { namespace in
                    for (connection, address) in named where namespace.outbounds[connection] != nil {
                        namespace.profile?.addresses[connection] = address
                    }
                }
            }
        }
    }

    /// A realtime connection attached at `started` (`ProfileClock`), from `remote` when its
    /// door knew it: its address is kept (or asked of its loop) and `concurrent-connect` sent.
    func profileConnected(_ connection: ConnectionID, outbound: ConnectionOutbound, remote: String?, started: UInt64) {
        guard profile != nil else { return }
        if let remote {
            profile?.addresses[connection] = remote
        } else {
            learnAddresses(of: [(connection, outbound)])
        }
        publishProfile(adding: connectionRecord(.concurrentConnect, connection, started: started))
    }

    /// A realtime connection detached (its onDisconnect writes made) since `started`:
    /// `concurrent-disconnect` is sent after what those writes did, and its address forgotten.
    func profileDisconnected(_ connection: ConnectionID, started: UInt64) {
        guard profile != nil else { return }
        publishProfile(adding: connectionRecord(.concurrentDisconnect, connection, started: started))
        profile?.addresses[connection] = nil
    }

    private func connectionRecord(_ name: ProfileOperation, _ connection: ConnectionID, started: UInt64) -> ProfileRecord {
        var record = ProfileRecord(name: name, timestamp: 0)
        let ended = ProfileClock.now()
        record.nanoseconds = ended >= started ? ended - started : 0
        record.started = started
        record.connection = connection
        return record
    }

    /// Hands the records the checkpoint noted (then `extra`) to every profiler, with what only
    /// the shell knows: when each ran, how long each operation waited since `received` (when
    /// its request arrived, as its door stamped it), and the client's address (its realtime
    /// connection's, else `client`, the REST request's). Does nothing while nobody profiles.
    func publishProfile(received: UInt64? = nil, client: String? = nil, adding extra: ProfileRecord? = nil) {
        guard let profile else { return }
        var records = state.takeProfile()
        if let extra { records.append(extra) }
        guard !records.isEmpty else { return }
        let wall = Namespace.now()
        let now = ProfileClock.now()
        for index in records.indices {
            let started = records[index].started
            records[index].timestamp = wall - Int64((now >= started ? now - started : 0) / 1_000_000)
            guard records[index].name != .listenerBroadcast else { continue }
            if let received, started >= received { records[index].pendingNanoseconds = started - received }
            records[index].client = records[index].connection.flatMap { profile.addresses[$0] } ?? client
        }
        for outbound in profile.profilers.values { outbound.send(records) }
    }
}
