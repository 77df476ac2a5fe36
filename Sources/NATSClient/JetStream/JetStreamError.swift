/// Why a JetStream call failed: the API refused it (`apiError` says why, e.g. a fenced publish),
/// the request never got an answer (`natsError`: timeout, no responders, not connected), or the
/// answer could not be read. Fencing is thus told apart from "try again".
public struct JetStreamError: Error, Hashable, CustomStringConvertible {
    private enum Base: Hashable {
        case api(JetStreamAPIError)
        case transport(NATSError)
        case malformedResponse(String)
        case invalidArgument(String)
        case objectCorrupt(String)
    }

    private let base: Base

    private init(_ base: Base) {
        self.base = base
    }

    /// The JetStream API refused the request.
    public static func api(_ error: JetStreamAPIError) -> Self { Self(.api(error)) }
    /// The request failed below JetStream (timeout, no responders, disconnected, closed).
    public static func transport(_ error: NATSError) -> Self { Self(.transport(error)) }
    /// The answer was not the JSON (or header block) expected.
    public static func malformedResponse(_ detail: String) -> Self { Self(.malformedResponse(detail)) }
    /// An argument the API cannot take (a bad name or key).
    public static func invalidArgument(_ detail: String) -> Self { Self(.invalidArgument(detail)) }

    /// An object read back does not match its recorded size or digest.
    public static func objectCorrupt(_ detail: String) -> Self { Self(.objectCorrupt(detail)) }

    /// The API error, when the server refused.
    public var apiError: JetStreamAPIError? {
        if case .api(let error) = base { return error }
        return nil
    }

    /// The transport error, when there was no usable answer.
    public var natsError: NATSError? {
        if case .transport(let error) = base { return error }
        return nil
    }

    /// Whether this is the refusal of a publish whose expected last sequence was stale (10071),
    /// or, from a replicated stream, that another publish to the subject is being proposed
    /// (10164; nats.go and nats.py read both as a lost race): the writer has been fenced and must
    /// not retry blindly. The server that answered stored nothing, but that server may not be the
    /// stream's leader any more (`provesLaterMessage`).
    public var isWrongLastSequence: Bool {
        apiError?.errCode == JetStreamAPIError.wrongLastSequence || isSubjectInFlight
    }

    /// The last sequence a 10071 refusal names (its text is "wrong last sequence: 42"); nil for
    /// any other error.
    public var namedLastSequence: UInt64? {
        guard let api = apiError, api.errCode == JetStreamAPIError.wrongLastSequence,
            let marker = api.errorDescription.firstRange(of: "wrong last sequence: ")
        else { return nil }
        return UInt64(api.errorDescription[marker.upperBound...].prefix { $0.isASCII && $0.isNumber })
    }

    /// Whether this refusal of a publish that expected last sequence `expected` proves that
    /// another message came after `expected`, so the publish is not stored, now or later: a
    /// 10071 naming a later sequence, which only a stored message can give. Any other
    /// wrong-last-sequence refusal proves nothing. A stream leader cut off from its peers and
    /// back before it learned that another one was elected still answers as the leader for a
    /// moment, from its old store and its own proposals (which never commit): it refuses a
    /// publish with 10071 naming a sequence at or before `expected`, or with 10164, while the
    /// real leader stores the same publish and its acknowledgement comes second.
    public func provesLaterMessage(after expected: UInt64) -> Bool {
        guard let named = namedLastSequence else { return false }
        return named > expected
    }

    /// Whether the refusal is the replicated stream's 10164: another publish to the subject is
    /// being proposed, which may be an earlier try of the same message.
    public var isSubjectInFlight: Bool { apiError?.errCode == JetStreamAPIError.wrongLastSequenceInFlight }

    /// Whether asking again may succeed: no answer in time, no connection yet, nobody answering
    /// the API yet (leaders being elected), or JetStream's own "temporarily unavailable" (503,
    /// as while it recovers its streams after a restart).
    public var isTemporary: Bool {
        if let api = apiError { return api.code == 503 }
        guard let transport = natsError else { return false }
        return transport == .timeout() || transport == .notConnected() || transport == .noResponders()
    }

    /// Errors compare by kind, API errors also by err_code; details are for people.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs.base, rhs.base) {
        case (.api(let left), .api(let right)): return left.errCode == right.errCode
        case (.transport(let left), .transport(let right)): return left == right
        case (.malformedResponse, .malformedResponse), (.invalidArgument, .invalidArgument), (.objectCorrupt, .objectCorrupt): return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch base {
        case .api(let error): hasher.combine(error.errCode)
        case .transport(let error): hasher.combine(error)
        case .malformedResponse: hasher.combine(-1)
        case .invalidArgument: hasher.combine(-2)
        case .objectCorrupt: hasher.combine(-3)
        }
    }

    public var description: String {
        switch base {
        case .api(let error): return error.description
        case .transport(let error): return "JetStream request failed: \(error)"
        case .malformedResponse(let detail): return "JetStream answer unreadable: \(detail)"
        case .invalidArgument(let detail): return "JetStream invalid argument: \(detail)"
        case .objectCorrupt(let detail): return "object corrupt: \(detail)"
        }
    }
}
