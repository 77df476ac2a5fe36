/// Re-indents compact JSON for `print=pretty`, in the hosted service's layout: two spaces per
/// level and a space on both sides of the colon (`"a" : 1`).
///
/// It works on the compact bytes Kindling writes (no whitespace outside strings), so pretty
/// output is always the same data as compact output.
enum JSONIndenter {
    static func indent(_ compact: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(compact.count + compact.count / 4)
        var depth = 0
        var inString = false
        var escaped = false
        var index = 0
        func newline(_ out: inout [UInt8], _ depth: Int) {
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
        }
        while index < compact.count {
            let byte = compact[index]
            index += 1
            if inString {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                out.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                out.append(byte)
                if index < compact.count, compact[index] == UInt8(ascii: "}") || compact[index] == UInt8(ascii: "]") {
                    // An empty object or array stays on one line.
                    out.append(contentsOf: [UInt8(ascii: " "), compact[index]])
                    index += 1
                    continue
                }
                depth += 1
                newline(&out, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline(&out, depth)
                out.append(byte)
            case UInt8(ascii: ","):
                out.append(byte)
                newline(&out, depth)
            case UInt8(ascii: ":"):
                out.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\n"))
        return out
    }
}
