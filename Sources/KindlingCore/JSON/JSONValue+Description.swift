/// A value prints as the compact JSON text it stands for (`{"free":2}`), not as nested enum cases,
/// so `print(snapshot.value)` and string interpolation show what is stored.
extension JSONValue: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { JSONWriter.string(self) }

    public var debugDescription: String { JSONWriter.string(self) }
}

/// A member prints as it appears inside an object: `"key":value`.
extension JSONMember: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        var writer = JSONWriter()
        writer.write(key)
        writer.writeRaw(":".utf8)
        writer.write(value)
        return writer.text
    }

    public var debugDescription: String { description }
}
