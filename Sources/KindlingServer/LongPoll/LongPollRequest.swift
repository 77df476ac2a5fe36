/// A request at `/.lp`, read from its query parameters as the JS SDK's long-polling transport
/// sends them. Every number is range-checked; anything else is refused with the reason.
enum LongPollRequest: Equatable {
    /// Opens a session (`start=t`): `cb` names the page's callbacks, `ls` the session the client
    /// had before.
    case start(callback: String, lastSession: String?)
    /// A poll of session `id` (`id`, `pw`, `ser`), carrying segments of the client's messages
    /// (`seg<i>`, `ts<i>`, `d<i>`).
    case poll(id: String, password: String, segments: [LongPollSegments.Segment])
    /// The hidden frame (`dframe=t`) whose connection the page keeps open until it unloads.
    case disconnectFrame(id: String, password: String)

    /// The most segments one request carries: the SDK's URLs hold at most 1,870 characters of
    /// data, one segment of it at least 31.
    static let maxSegments = 64

    init(parameters: [String: String]) throws(LongPollRequestError) {
        if parameters["start"] != nil {
            guard let callback = parameters["cb"], LongPollScript.isCallbackID(callback) else {
                throw LongPollRequestError("a long-polling start needs cb, the callback id (digits)")
            }
            self = .start(callback: callback, lastSession: parameters["ls"])
            return
        }
        guard let id = parameters["id"], !id.isEmpty, id.utf8.count <= 64, let password = parameters["pw"], !password.isEmpty,
            password.utf8.count <= 64
        else {
            throw LongPollRequestError("a long-polling request needs start=t, or the session's id and pw")
        }
        if parameters["dframe"] != nil {
            self = .disconnectFrame(id: id, password: password)
            return
        }
        if let serial = parameters["ser"], Self.number(serial) == nil { throw LongPollRequestError("ser must be a number") }
        var segments: [LongPollSegments.Segment] = []
        while let number = parameters["seg\(segments.count)"] {
            guard segments.count < Self.maxSegments else { throw LongPollRequestError("more than \(Self.maxSegments) segments in one request") }
            let index = segments.count
            guard let segment = Self.number(number), let total = parameters["ts\(index)"].flatMap(Self.number), let data = parameters["d\(index)"]
            else {
                throw LongPollRequestError("segment \(index) needs seg\(index) and ts\(index) as numbers and d\(index)")
            }
            segments.append(LongPollSegments.Segment(number: segment, total: total, data: Array(data.utf8)))
        }
        self = .poll(id: id, password: password, segments: segments)
    }

    /// A decimal number of at most 9 digits (no sign), so no arithmetic on it can overflow.
    static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(text)
    }
}

/// Why a request at `/.lp` was refused (400).
struct LongPollRequestError: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}
