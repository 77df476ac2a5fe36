/// The answers to long-polling requests: scripts the SDK loads into its hidden iframe, each
/// calling back into the page. The SDK names its two callbacks on the page's window with the
/// connection's callback id (`cb`): `pLPCommand<cb>` for commands (`start`, `close`) and
/// `pRTLPCB<cb>` for numbered packets of messages, which it reorders by number. The scripts run
/// in the iframe, so they reach the callbacks through `parent`.
enum LongPollScript {
    /// A callback id as the SDK makes them (a counter): digits, at most 16.
    static func isCallbackID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 16 && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The answer to `start`: the connection's id and password, then its first packet.
    static func start(callback: String, id: String, password: String, packet: Int, messages: [[UInt8]]) -> [UInt8] {
        var script = Array("parent.pLPCommand\(callback)(\"start\",\"\(id)\",\"\(password)\");".utf8)
        append(packet: packet, messages, callback: callback, to: &script)
        return script
    }

    /// One packet of messages, then (with `closeAfter`) the command to close the connection
    /// once the SDK has handled that packet.
    static func packet(callback: String, number: Int, _ messages: [[UInt8]], closeAfter: Int? = nil) -> [UInt8] {
        var script: [UInt8] = []
        if !messages.isEmpty { append(packet: number, messages, callback: callback, to: &script) }
        if let closeAfter { script += Array("parent.pLPCommand\(callback)(\"close\",\(closeAfter));".utf8) }
        return script
    }

    /// The command that closes the connection at once (the session has ended).
    static func close(callback: String) -> [UInt8] {
        Array("parent.pLPCommand\(callback)(\"close\");".utf8)
    }

    /// `pRTLPCB<cb>(number,[message,…]);`. Each message is JSON, which is a JavaScript
    /// expression; U+2028 and U+2029, which older engines do not take inside a string literal,
    /// are written as escapes (they occur only inside strings in JSON).
    private static func append(packet number: Int, _ messages: [[UInt8]], callback: String, to script: inout [UInt8]) {
        script += Array("parent.pRTLPCB\(callback)(\(number),[".utf8)
        for (index, message) in messages.enumerated() {
            if index > 0 { script.append(UInt8(ascii: ",")) }
            appendEscapingLineSeparators(message, to: &script)
        }
        script += Array("]);".utf8)
    }

    private static func appendEscapingLineSeparators(_ message: [UInt8], to script: inout [UInt8]) {
        // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
        guard message.contains(0xE2) else {
            script += message
            return
        }
        var index = 0
        while index < message.count {
            if message[index] == 0xE2, index + 2 < message.count, message[index + 1] == 0x80, message[index + 2] == 0xA8 || message[index + 2] == 0xA9
            {
                script += Array((message[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                index += 3
            } else {
                script.append(message[index])
                index += 1
            }
        }
    }
}
