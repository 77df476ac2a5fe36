extension JSONWriter {
    /// Writes a merge's entries as one object, `{"rel/path":value,…}`, in their order: the one
    /// spelling of a merge for the wire, the write-ahead log and REST answers.
    public mutating func write(_ entries: [MergeEntry], format: JSONFormat) {
        writeRaw("{".utf8)
        for (offset, entry) in entries.enumerated() {
            if offset > 0 { writeRaw(",".utf8) }
            write(relativePath: entry.path)
            writeRaw(":".utf8)
            entry.node.write(to: &self, format: format)
        }
        writeRaw("}".utf8)
    }
}
