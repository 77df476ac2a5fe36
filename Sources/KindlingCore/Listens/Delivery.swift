/// One change to send, and everyone it goes to.
///
/// Recipients that need the same bytes share one delivery, so the server encodes each distinct
/// payload once however many subscribers receive it; only the tag (per recipient) differs in
/// the envelope.
public struct Delivery<Subscriber: Hashable & Sendable>: Sendable {
    /// What the recipients' copy of the data must become.
    public enum Change: Sendable, Equatable {
        /// The data at the path is replaced (a `d` push; null when the location is gone).
        case put(Path, Node)
        /// The listed locations below the path are replaced (an `m` push).
        case merge(Path, [MergeEntry])
    }

    /// One recipient, and the tag of its query when the change is a tagged query window.
    public struct Recipient: Sendable, Hashable {
        public var subscriber: Subscriber
        public var tag: Int?

        /// Always inlined: `ChangeFanout` runs unspecialized (generic over the subscriber), and a
        /// call here looked the type's metadata up again for each recipient of a fan-out.
        @inline(__always)
        public init(subscriber: Subscriber, tag: Int?) {
            self.subscriber = subscriber
            self.tag = tag
        }
    }

    public var change: Change
    public var recipients: [Recipient]

    public init(change: Change, recipients: [Recipient]) {
        self.change = change
        self.recipients = recipients
    }
}
