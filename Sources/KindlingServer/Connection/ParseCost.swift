import KindlingCore

/// What parsing a request's JSON will hold in memory, weighed and taken from the server-wide
/// budget of requests in progress (`InFlightBudget`) before the parse starts.
///
/// Parsing costs far more memory than the text: a body of many small values takes about nine
/// times its size as parsed values and tree nodes, so clients whose writes the rules deny could
/// still make the server hold gigabytes by sending a few large requests at once. REST bodies
/// (`ParseReservation`) and realtime messages (`WebSocketSessionHandler`) are both weighed
/// here; each maps a refusal to its own wire.
///
/// Measured (peak resident size of a debug `kindling serve --in-memory`, VmHWM, a rough guide):
/// a PUT of 250 MB holding 3.3 million values (`scripts/generate-big-json.py --values 2480000`)
/// raised it by 822 MB (798 MB in a release build), which the estimate puts at 923 MB; one of
/// 75 MB holding 6.3 million values (small objects of three members) by 658 MB, estimated at
/// 954 MB. So a write of the hosted service's largest size, 256 MB, is taken under the default
/// budget of 1024 MB when its values average about 64 bytes or more, and a second such write at
/// the same time is not.
enum ParseCost {
    /// Memory counted for each value a text holds (`JSONValueCount`, exact but for empty
    /// arrays): a parsed value and its tree node take about that much (from 81 to 97 bytes in
    /// the measurements above, beside the text and its copy).
    static let bytesPerValue = 128

    /// Below this many bytes a realtime message's values are first not counted one by one: it
    /// is taken to hold as many as it could (one per two bytes, as in `[0,0,…]`, at most 256 KB
    /// of parsing), which spares every small write a pass over its bytes. Larger messages, and
    /// a small one that does not fit so, are counted (`JSONValueCount`), so a 16 MB string is
    /// weighed as the one value it is.
    static let countedFrom = 4 * 1024

    /// Why a parse was not allowed to start.
    enum Refusal: Error, Equatable {
        /// Parsing would take more than the whole budget beside the text's own bytes: it can
        /// never be parsed here (all in bytes).
        case neverFits(estimate: Int, textBytes: Int, limit: Int)
        /// The budget cannot hold it now; it may once other requests finish.
        case notNow

        /// Says why, for a client's error message.
        var message: String {
            switch self {
            case .neverFits(let estimate, let textBytes, let limit):
                "Parsing this request would take about \(Self.size(estimate)) beside its own \(Self.size(textBytes)), more than the server's "
                    + "\(Self.size(limit)) for requests in progress (--max-unfinished-mb); send the data in smaller writes"
            case .notNow:
                "The server is holding too many requests in progress; retry later"
            }
        }

        /// Rounded up, in KB below 10 MB and in MB above.
        private static func size(_ bytes: Int) -> String {
            let roundedUp = { (unit: Int) in bytes / unit + (bytes % unit == 0 ? 0 : 1) }
            return bytes < 10 << 20 ? "\(roundedUp(1 << 10)) KB" : "\(roundedUp(1 << 20)) MB"
        }
    }

    /// Takes what parsing a realtime message will hold from `budget` (see `countedFrom`); the
    /// bytes taken, to give back once its request has been taken by its namespace.
    static func reserve(message bytes: UnsafeRawBufferPointer, from budget: InFlightBudget) -> Result<Int, Refusal> {
        if bytes.count < countedFrom, case .success(let taken) = reserve(values: bytes.count / 2 + 1, textBytes: bytes.count, from: budget) {
            return .success(taken)
        }
        var count = JSONValueCount()
        count.add(bytes)
        return reserve(values: count.upperBound, textBytes: bytes.count, from: budget)
    }

    /// Takes what parsing `values` values will hold from `budget`, while the text's own
    /// `textBytes` are held beside it; the bytes taken, to give back once the parsed request
    /// has been taken by its namespace. Besides `bytesPerValue` for each value, the parse holds
    /// as much again as the text (a long string is one value, but its parsed copy is as long).
    static func reserve(values: Int, textBytes: Int, from budget: InFlightBudget) -> Result<Int, Refusal> {
        let text = max(0, textBytes)
        // What the budget could hold beside the text and its copy (negative when not even those).
        let room = budget.limit - min(budget.limit, text) - min(budget.limit, text)
        // Compared by division: the product is formed only once it is known to fit.
        guard room >= 0, values <= room / bytesPerValue else {
            let (perValue, overflow) = values.multipliedReportingOverflow(by: bytesPerValue)
            let (estimate, over) = perValue.addingReportingOverflow(text)
            return .failure(.neverFits(estimate: overflow || over ? Int.max : estimate, textBytes: text, limit: budget.limit))
        }
        // At most `room` plus the text, within the limit, so no overflow.
        let bytes = values * bytesPerValue + text
        guard budget.reserve(bytes) else { return .failure(.notNow) }
        return .success(bytes)
    }
}
