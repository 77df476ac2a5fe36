/// `writeSizeLimit=tiny|small|medium|large|unlimited`: the longest a REST write may be expected
/// to take (1 s, 10 s, 30 s, 60 s, or no limit). As on the hosted service, the time is an
/// estimate made before the write, from its size: the body's bytes over the rate at which
/// Kindling parses, applies and logs a large write (`bytesPerSecond`). A write estimated to take
/// longer is refused with 400 and changes nothing.
enum RESTWriteSizeLimit: String, Sendable {
    case tiny, small, medium, large, unlimited

    /// A conservative rate for one large write: below the slowest measured. A release build
    /// with `--fsync always` took 4.7 to 5.6 s for a PUT of 100 MB of small objects (about
    /// 20 MB/s), 3.6 s for 75 MB of four million numbers, and 1.8 s for 100 MB of 1 MB strings.
    static let bytesPerSecond = 16 * 1024 * 1024

    /// The target time in seconds, or nil for no limit.
    var seconds: Int? {
        switch self {
        case .tiny: 1
        case .small: 10
        case .medium: 30
        case .large: 60
        case .unlimited: nil
        }
    }

    init(parameter text: String) throws(RESTError) {
        guard let limit = RESTWriteSizeLimit(rawValue: text) else {
            throw RESTError(.badRequest, "writeSizeLimit must be tiny, small, medium, large or unlimited")
        }
        self = limit
    }

    /// The refusal of a write of `bytes`, if it is estimated to take longer than the target.
    func refusal(bodyBytes bytes: Int) -> RESTError? {
        guard let seconds, bytes > seconds * Self.bytesPerSecond else { return nil }
        return RESTError(
            .badRequest,
            "The write of \(bytes) bytes is estimated to take longer than writeSizeLimit=\(rawValue) allows (\(seconds) s); send it in smaller parts or raise the limit"
        )
    }
}
