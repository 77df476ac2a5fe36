import KindlingProtocol

/// One whole realtime message as a session receives it from either transport (a WebSocket text
/// frame, or a message rebuilt from long-polling segments), decoded once the budget of requests
/// in progress holds what parsing it takes (`ParseCost`).
enum RealtimeDecoding {
    /// What the message asks of the session.
    enum Outcome {
        /// A request for the namespace, with the bytes of the parse budget it holds until taken.
        case input(SessionInput, parsed: Int)
        /// A request refused without being parsed (its refusal goes to the namespace, to be
        /// answered in order), and what to log about it, if anything.
        case refused(SessionInput, note: String?)
        /// A keep-alive ping, answered with a pong by the transport that carried it.
        case ping
        /// Another control message (`a` and `n` move a session from long-polling to a WebSocket).
        case control(String)
        /// Nothing to do (a request that needs no answer and changes nothing).
        case nothing
        /// The message cannot be taken and names no request to refuse: the connection closes.
        /// `tooLarge` says the message was over a size limit; `busy` that the server could take
        /// it later (the client should reconnect and send it again).
        case close(reason: String, tooLarge: Bool, busy: Bool)
    }

    /// Decodes `bytes`, holding the parse's share of `budget` in a request it returns.
    static func decode(_ bytes: UnsafeRawBufferPointer, budget: InFlightBudget, verifier: CredentialVerifier) -> Outcome {
        let share: Int
        switch ParseCost.reserve(message: bytes, from: budget) {
        case .success(let taken):
            share = taken
        case .failure(let refusal):
            switch refusal {
            case .neverFits:
                // Refused as too big (its request fails and the SDK does not send it again).
                if let number = ClientMessage.requestNumber(utf8: bytes) {
                    return .refused(
                        .reject(number: number, status: .tooBig, message: refusal.message),
                        note: "refused a message too large to parse: \(refusal.message)")
                }
                return .close(reason: "message too large to parse", tooLarge: true, busy: false)
            case .notNow:
                return .close(reason: "server busy; retry later", tooLarge: false, busy: true)
            }
        }
        let message: ClientMessage
        do throws(ProtocolError) {
            message = try ClientMessage.decode(utf8: bytes.assumingMemoryBound(to: UInt8.self))
        } catch {
            budget.release(share)
            if let number = error.requestNumber {
                let status = error.validation.map(WireStatus.init) ?? (error.kind == .tooLarge ? .tooBig : .invalidData)
                let note = error.kind == .tooLarge ? "refused a request over the message size limit: \(error.message)" : nil
                return .refused(.reject(number: number, status: status, message: error.message), note: note)
            }
            return .close(reason: error.message, tooLarge: error.kind == .tooLarge, busy: false)
        }
        switch message {
        case .ping:
            budget.release(share)
            return .ping
        case .otherControl(let type):
            budget.release(share)
            return .control(type)
        case .request(let request):
            if let input = SessionInput.from(request, verifier: verifier) { return .input(input, parsed: share) }
            budget.release(share)
            return .nothing
        }
    }
}
