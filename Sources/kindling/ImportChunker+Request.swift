import KindlingCore

extension ImportChunker.Step {
    /// The REST write that applies the step below the import's path: the first step replaces
    /// what is there (a PUT of its entries nested into one value), so the import as a whole
    /// replaces the data at its path; each later one is a multi-path PATCH at the deepest path
    /// above all its entries.
    func request(first: Bool) -> (method: String, path: [String], body: JSONValue) {
        if first { return ("PUT", [], Self.nested(entries)) }
        let shortest = entries.map(\.path.count).min() ?? 1
        var prefix = entries.first.map { Array($0.path.prefix(max(0, shortest - 1))) } ?? []
        for entry in entries {
            while !entry.path.starts(with: prefix) { prefix.removeLast() }
        }
        let members = entries.map { JSONMember($0.path.dropFirst(prefix.count).joined(separator: "/"), $0.value) }
        return ("PATCH", prefix, .object(members))
    }

    /// The entries as one value: each at its path inside an object (their paths never overlap).
    static func nested(_ entries: [ImportChunker.Entry]) -> JSONValue {
        if entries.count == 1, let only = entries.first, only.path.isEmpty { return only.value }
        var names: [String] = []
        var groups: [String: [ImportChunker.Entry]] = [:]
        for entry in entries {
            guard let head = entry.path.first else { continue }
            if groups[head] == nil { names.append(head) }
            groups[head, default: []].append(ImportChunker.Entry(path: Array(entry.path.dropFirst()), value: entry.value))
        }
        return .object(names.map { JSONMember($0, nested(groups[$0] ?? [])) })
    }
}
