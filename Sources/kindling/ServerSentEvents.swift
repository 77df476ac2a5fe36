/// Server-sent events read from a stream's bytes as they come, in pieces of any size: lines end
/// at `\n` (a `\r` before it is dropped), `event:` and `data:` fields gather until a blank line
/// ends the event. Written by hand: async-http-client hands over the body's bytes and no kept
/// library reads events from them.
struct ServerSentEvents {
    struct Event: Equatable {
        /// The `event:` name (`message` when the event has none).
        var name: String
        /// The `data:` lines, joined with `\n`.
        var data: String
    }

    /// A line longer than this ends the reading: no profiler record comes near it.
    static let maxLineBytes = 16 << 20

    /// The longest line read; a data stream's first event holds all the data at its path.
    var maxLineBytes = ServerSentEvents.maxLineBytes

    /// A line over `maxLineBytes`.
    struct LineTooLong: Error {}

    private var line: [UInt8] = []
    private var name: String?
    private var data: [String] = []

    /// The events `bytes` complete.
    mutating func read(_ bytes: some Sequence<UInt8>) throws(LineTooLong) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                if line.count > maxLineBytes { throw LineTooLong() }
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if let event = take(String(decoding: line, as: UTF8.self)) { events.append(event) }
            line.removeAll(keepingCapacity: true)
        }
        return events
    }

    /// Takes one whole line; a blank one ends the event being read.
    private mutating func take(_ text: String) -> Event? {
        if text.isEmpty {
            defer {
                name = nil
                data = []
            }
            guard !data.isEmpty else { return nil }
            return Event(name: name ?? "message", data: data.joined(separator: "\n"))
        }
        if text.hasPrefix(":") { return nil }
        let field = text.prefix { $0 != ":" }
        var value = text.dropFirst(field.count + 1)
        if value.hasPrefix(" ") { value = value.dropFirst() }
        switch field {
        case "event": name = String(value)
        case "data": data.append(String(value))
        default: break
        }
        return nil
    }
}
