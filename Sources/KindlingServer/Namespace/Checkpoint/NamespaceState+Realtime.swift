import KindlingProtocol

extension NamespaceState {
    /// Runs one input of a realtime connection and appends its response (when the request was
    /// numbered) after whatever the operation sent listeners. Returns the answer, if it ran.
    @discardableResult
    mutating func handle(_ input: SessionInput, from connection: ConnectionID, now: Int64, into out: inout [Outgoing]) -> Answer? {
        switch input {
        case .operation(let number, let operation):
            return handle(operation, number: number, from: connection, now: now, into: &out)
        case .reject(let number, let status, let message):
            out.append(Outgoing(to: connection, message: ServerMessage.failure(number, status: status, message: message)))
            return nil
        }
    }

    /// `handle` of an operation already taken out of its input (the namespace binds it once to
    /// admit it; passing the input again would copy the request's data twice more).
    mutating func handle(_ operation: Operation, number: Int?, from connection: ConnectionID, now: Int64, into out: inout [Outgoing]) -> Answer {
        let answer = apply(operation, by: .realtime(connection), now: now, into: &out)
        if let number { out.append(Outgoing(to: connection, answer: answer, number: number)) }
        return answer
    }
}
