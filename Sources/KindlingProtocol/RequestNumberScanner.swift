/// Finds the request number of a data message, `{"t":"d","d":{…,"r":N,…}}`, in bytes read one
/// piece at a time and not kept: the message is too large to hold (`FrameAssembler` drops it),
/// but its request must be answered. The SDKs write the envelope's members in different orders
/// (JS `r, a, b`; Android `a, r, b`; iOS as its dictionary lists them, so `r` may come after
/// the whole body), so the scanner follows the JSON nesting through every byte, with constant
/// memory, and takes the number of the `r` member of the object under `d`.
///
/// Written here because no JSON parser in use reads a document in pieces without keeping it.
struct RequestNumberScanner {
    /// Nesting depth: 1 inside the envelope, 2 inside its `d` object.
    private var depth = 0
    private var inString = false
    private var escaped = false
    /// The string being read is a member name at depth 1 or 2 (only short ones are kept).
    private var readingName = false
    private var name: [UInt8] = []
    /// The next string at depth 1 or 2 is a member name (after `{` or `,`).
    private var expectsName = false
    /// The last member names read at depths 1 and 2.
    private var outerName: [UInt8] = []
    private var innerName: [UInt8] = []
    /// The object at depth 2 is the value of `d`.
    private var insideData = false
    /// Digits of the `r` value read so far, and whether anything else spoiled it.
    private var digits = 0
    private var value = 0
    private var spoiled = false
    private(set) var requestNumber: Int?

    mutating func scan(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { scan(byte) }
    }

    private mutating func scan(_ byte: UInt8) {
        if inString {
            if escaped {
                escaped = false
                spoilName()
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                if readingName {
                    readingName = false
                    if depth == 1 {
                        outerName = name
                    } else {
                        innerName = name
                        (digits, value, spoiled) = (0, 0, false)
                    }
                }
            } else if readingName {
                name.count < 2 ? name.append(byte) : spoilName()
            }
            return
        }
        let readingNumber = depth == 2 && insideData && innerName == Array("r".utf8) && requestNumber == nil
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9") where readingNumber:
            digits += 1
            // Request numbers are small; anything longer is not one an SDK sent.
            if digits > 15 { spoiled = true } else { value = value * 10 + Int(byte - UInt8(ascii: "0")) }
            return
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ":"):
            return
        default:
            break
        }
        if readingNumber, digits > 0 || !(byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}")) {
            // The value of `r` ended (or is not a plain number).
            if digits > 0, !spoiled, byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") { requestNumber = value }
            innerName = []
        }
        switch byte {
        case UInt8(ascii: "\""):
            inString = true
            readingName = expectsName && (depth == 1 || depth == 2)
            expectsName = false
            name = []
        case UInt8(ascii: "{"):
            if depth == 1 { insideData = outerName == Array("d".utf8) }
            depth += 1
            expectsName = true
        case UInt8(ascii: "["):
            depth += 1
            expectsName = false
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            expectsName = false
        case UInt8(ascii: ","):
            expectsName = true
        default:
            expectsName = false
        }
    }

    /// A name with escapes or more than two bytes is none the scanner looks for.
    private mutating func spoilName() {
        guard readingName else { return }
        name = Array("??".utf8)
    }
}
