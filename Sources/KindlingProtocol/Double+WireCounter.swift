extension Double {
    /// Largest size of a request number or a listen tag: 15 digits, what
    /// `CompactRequestEnvelope` reads without building the message, so both decoders take the
    /// same numbers. The SDKs count up from 1, far below it.
    static let maxWireCounter = 1e15

    /// This number as a request number or listen tag: whole and smaller in size than
    /// `maxWireCounter` (so it fits an `Int` and every SDK reads it back exactly); nil otherwise.
    var wireCounter: Int? {
        guard self == rounded(), abs(self) < Double.maxWireCounter else { return nil }
        return Int(self)
    }
}
