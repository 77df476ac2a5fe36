import KindlingCore

/// The checkpoint's part of profiling: while `profiling` is set, `apply` notes each operation
/// it decides and `commit` each write's broadcast, timed with the trail's clock. Their
/// timestamps, waits and client addresses are the shell's to add (`Namespace+Profile`).
extension NamespaceState {
    /// Only admins profile a namespace: the records name every path written and read.
    func refusalOfProfiling(by auth: AuthState) -> Refusal? { auth == .admin ? nil : .permissionDenied }

    /// Hands over the records noted since the last call (none while nobody profiles).
    mutating func takeProfile() -> [ProfileRecord] {
        guard profiling != nil else { return [] }
        var taken: [ProfileRecord] = []
        swap(&taken, &profiling!.records)
        return taken
    }

    /// Notes an operation `apply` decided: it started at `started` (the trail's clock), its
    /// record goes at `index` (before the broadcasts its commit noted), and `sent` holds the
    /// outputs it made.
    mutating func noteOperation(
        _ operation: Operation, by caller: Caller, answer: Answer, started: UInt64, at index: Int, sent: ArraySlice<Outgoing>
    ) {
        guard let clock = profiling?.clock, let name = ProfileOperation(operation, by: caller) else { return }
        var record = ProfileRecord(name: name, timestamp: 0)
        let ended = clock()
        record.nanoseconds = ended >= started ? ended - started : 0
        record.started = started
        record.connection = caller.connection
        if case .refused(.permissionDenied) = answer {
            record.allowed = false
        } else {
            record.allowed = true
        }
        switch operation {
        case .get(let path, let query):
            noteRead(path, query, into: &record)
            if case .data(let node) = answer { record.bytes = Self.jsonSize(of: node) }
        case .listen(let path, let query, _, _, _), .openStream(let path, let query, _):
            noteRead(path, query, into: &record)
            record.bytes = Self.bytes(of: sent, to: caller.connection)
        case .set(let path, let data, _):
            record.path = path
            record.bytes = Self.jsonSize(of: data)
        case .push(let path, let data):
            // The new child, as the write made it.
            if case .written(.pushed(let name), _) = answer { record.path = path.child(name) } else { record.path = path }
            record.bytes = Self.jsonSize(of: data)
        case .update(let path, let members):
            record.path = path
            record.bytes = Self.jsonSize(of: .object(members))
        case .unlisten(let path, _):
            record.path = path
        case .onDisconnectSet, .onDisconnectUpdate, .onDisconnectCancel, .authenticate, .refuseCredential, .acknowledge:
            break
        }
        profiling!.records.insert(record, at: min(index, profiling!.records.count))
    }

    /// Commits a write as `commit` does, and notes its broadcast: how long finding and encoding
    /// its listeners' events took, how many messages went to listeners and their bytes (zero of
    /// each when nobody listens there, as Firebase reports it).
    mutating func commitNoted(_ write: Write, into out: inout [Outgoing]) {
        guard let clock = profiling?.clock else { return }
        let started = clock()
        let first = out.count
        let deliveries = database.commit(write)
        out.append(contentsOf: encode(deliveries))
        let ended = clock()
        var record = ProfileRecord(name: .listenerBroadcast, timestamp: 0, path: write.path)
        record.nanoseconds = ended >= started ? ended - started : 0
        record.started = started
        var messages = 0
        var bytes = 0
        for outgoing in out[first...] {
            let recipients = outgoing.recipients.count
            messages += recipients
            bytes += recipients * outgoing.message.count
        }
        record.clientsUpdated = messages
        record.bytes = bytes
        profiling!.records.append(record)
    }

    /// A read's or listen's path and query, and whether its order lacks a declared index.
    private func noteRead(_ path: Path, _ query: Query, into record: inout ProfileRecord) {
        record.path = path
        record.query = query
        switch query.index {
        case .child, .value: record.unIndexed = !query.loadsAllData && !declaresIndex(query.index, at: path)
        case .key, .priority: record.unIndexed = false
        }
    }

    /// The bytes of the outputs in `sent` that go to `connection`.
    private static func bytes(of sent: ArraySlice<Outgoing>, to connection: ConnectionID?) -> Int {
        guard let connection else { return 0 }
        var total = 0
        for outgoing in sent where outgoing.recipients.contains(connection) { total += outgoing.message.count }
        return total
    }

    /// The length of `node` as compact JSON, measured without keeping it.
    static func jsonSize(of node: Node) -> Int {
        var writer = JSONWriter(countingOnly: 64 * 1024)
        node.write(to: &writer)
        return writer.count
    }

    /// The length of `value` as compact JSON. Containers are counted here and only leaves
    /// written (to a scratch writer emptied each time), so a large value is never copied.
    static func jsonSize(of value: JSONValue) -> Int {
        var scratch = JSONWriter()
        return jsonSize(of: value, scratch: &scratch)
    }

    private static func jsonSize(of value: JSONValue, scratch: inout JSONWriter) -> Int {
        switch value {
        case .array(let elements):
            var total = 2 + max(0, elements.count - 1)
            for element in elements { total += jsonSize(of: element, scratch: &scratch) }
            return total
        case .object(let members):
            var total = 2 + max(0, members.count - 1)
            for member in members {
                total += jsonSize(of: .string(member.key), scratch: &scratch) + 1 + jsonSize(of: member.value, scratch: &scratch)
            }
            return total
        case .null, .bool, .number, .string:
            scratch.bytes.removeAll(keepingCapacity: true)
            scratch.write(value)
            return scratch.bytes.count
        }
    }
}
