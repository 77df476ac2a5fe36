import KindlingCore
import NIOCore
import NIOPosix

/// The JSON bodies of REST responses.
///
/// Data is written the way clients read it (`.plain`: arrays rendered, no priorities) or, with
/// `format=export`, in the form that reads back to the same tree. Nodes are rendered on the
/// event loop, outside the namespace's queue: they are persistent values, so the queue only hands
/// over a reference.
enum RESTRendering {
    /// The data of a read (or a 412): `shallow` answers an object's children as `true`.
    static func data(_ node: Node, shallow: Bool, format: JSONFormat, print: RESTRequest.Print) -> [UInt8] {
        var writer = JSONWriter()
        if shallow, !node.isEmpty, !node.isLeaf {
            writer.writeRaw("{".utf8)
            for (offset, (key, _)) in node.children.enumerated() {
                if offset > 0 { writer.writeRaw(",".utf8) }
                writer.write(key.string)
                writer.writeRaw(":true".utf8)
            }
            writer.writeRaw("}".utf8)
        } else {
            node.write(to: &writer, format: shallow ? .plain : format)
        }
        return finish(writer.bytes, print)
    }

    /// The answer to a committed write.
    static func result(_ result: RESTWriteResult, format: JSONFormat, print: RESTRequest.Print) -> [UInt8] {
        var writer = JSONWriter()
        switch result {
        case .stored(let node):
            node.write(to: &writer, format: format)
        case .pushed(let name):
            writer.writeRaw("{\"name\":".utf8)
            writer.write(name.string)
            writer.writeRaw("}".utf8)
        case .updated(let entries):
            writer.write(entries, format: format)
        }
        return finish(writer.bytes, print)
    }

    /// `render()`, on one of `workers` when `node` is over `threshold` bytes as JSON (rendering
    /// hundreds of megabytes takes seconds, which would stall every other connection of the
    /// event loop); the bytes come back on `eventLoop`.
    static func offLoop(
        _ node: Node, above threshold: Int, workers: NIOThreadPool, eventLoop: any EventLoop, render: @escaping @Sendable () -> [UInt8]
    ) -> EventLoopFuture<[UInt8]> {
        guard isLarge(node, over: threshold) else { return eventLoop.makeSucceededFuture(render()) }
        return workers.runIfActive(eventLoop: eventLoop, render)
    }

    /// Whether `node` renders to more than about `threshold` bytes, found by a walk that stops
    /// as soon as it has seen that many (so it costs little for a small node and at most a
    /// bounded part of a big one).
    static func isLarge(_ node: Node, over threshold: Int) -> Bool {
        var remaining = threshold
        var pending = [node]
        while let next = pending.popLast() {
            if let leaf = next.leaf {
                if case .string(let text) = leaf { remaining -= text.utf8.count + 2 } else { remaining -= 8 }
            } else {
                for (key, child) in next.children {
                    remaining -= key.string.utf8.count + 4
                    pending.append(child)
                    if remaining < 0 { return true }
                }
            }
            if remaining < 0 { return true }
        }
        return false
    }

    /// A JSONP answer: `callback(data);`. The name was checked to be JavaScript names only.
    static func script(calling callback: String, with data: [UInt8]) -> [UInt8] {
        Array(callback.utf8) + [UInt8(ascii: "(")] + data + Array(");".utf8)
    }

    /// `Content-Disposition: attachment` for `download=`: the file name quoted, and also
    /// percent-encoded as UTF-8 (RFC 6266) when it is not plain ASCII.
    static func downloadHeaders(_ request: RESTRequest) -> [(String, String)] {
        guard let name = request.download else { return [] }
        var quoted = ""
        for scalar in name.unicodeScalars {
            if scalar == "\\" || scalar == "\"" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(scalar.isASCII ? scalar : "_")
        }
        var value = "attachment; filename=\"\(quoted)\""
        if !name.unicodeScalars.allSatisfy(\.isASCII) {
            let encoded = name.utf8.map { byte -> String in
                let unreserved =
                    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || Array("-._~".utf8).contains(byte)
                return unreserved ? String(UnicodeScalar(byte)) : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }.joined()
            value += "; filename*=UTF-8''\(encoded)"
        }
        return [("Content-Disposition", value)]
    }

    /// `{"error": message}`.
    static func error(_ message: String, print: RESTRequest.Print) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(.object([JSONMember("error", .string(message))]))
        return finish(writer.bytes, print)
    }

    /// Any JSON value (a server endpoint's answer).
    static func json(_ value: JSONValue, print: RESTRequest.Print) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return finish(writer.bytes, print)
    }

    private static func finish(_ compact: [UInt8], _ print: RESTRequest.Print) -> [UInt8] {
        print == .pretty ? JSONIndenter.indent(compact) : compact
    }
}
