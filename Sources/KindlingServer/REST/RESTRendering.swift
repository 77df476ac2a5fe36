import KindlingCore

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
            writer.writeRaw("{".utf8)
            for (offset, entry) in entries.enumerated() {
                if offset > 0 { writer.writeRaw(",".utf8) }
                writer.write(entry.path.relativeString)
                writer.writeRaw(":".utf8)
                entry.node.write(to: &writer, format: format)
            }
            writer.writeRaw("}".utf8)
        }
        return finish(writer.bytes, print)
    }

    /// `{"error": message}`.
    static func error(_ message: String, print: RESTRequest.Print) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(.object([JSONMember("error", .string(message))]))
        return finish(writer.bytes, print)
    }

    private static func finish(_ compact: [UInt8], _ print: RESTRequest.Print) -> [UInt8] {
        print == .pretty ? JSONIndenter.indent(compact) : compact
    }
}
