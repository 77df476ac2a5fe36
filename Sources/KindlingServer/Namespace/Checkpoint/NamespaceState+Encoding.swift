import KindlingCore
import KindlingProtocol

/// Encoding deliveries: each change's message made once for all the recipients that share it.
extension NamespaceState {
    /// Encodes deliveries: for realtime connections each change's data once and each envelope
    /// once per tag; for event streams the events once per listened location and format.
    func encode(_ deliveries: [Delivery<ConnectionID>]) -> [Outgoing] {
        var out: [Outgoing] = []
        for delivery in deliveries {
            if streams.isEmpty, delivery.recipients.allSatisfy({ $0.tag == nil }) {
                // The common case, plain listens on realtime connections: one envelope for all,
                // with no per-recipient grouping (a fan-out to 10,000 hashed nothing here).
                out.append(Outgoing(recipients: delivery.recipients.map(\.subscriber), message: NamespaceState.untaggedPush(delivery.change)))
                continue
            }
            var byTag: [Int?: [ConnectionID]] = [:]
            var byAudience: [StreamAudience: [ConnectionID]] = [:]
            for recipient in delivery.recipients {
                if !streams.isEmpty, let stream = streams[recipient.subscriber] {
                    byAudience[StreamAudience(location: stream.location, format: stream.format), default: []].append(recipient.subscriber)
                } else {
                    byTag[recipient.tag, default: []].append(recipient.subscriber)
                }
            }
            if !byTag.isEmpty {
                let (isMerge, path, data) = NamespaceState.pushParts(delivery.change)
                for (tag, recipients) in byTag {
                    out.append(Outgoing(recipients: recipients, message: ServerMessage.push(merge: isMerge, path: path, data: data, tag: tag)))
                }
            }
            for (audience, recipients) in byAudience {
                let events = EventStreamEncoding.events(for: delivery.change, at: audience.location, format: audience.format)
                if !events.isEmpty { out.append(Outgoing(recipients: recipients, message: events)) }
            }
        }
        return out
    }

    /// A change's push message for plain (untagged) listens.
    private static func untaggedPush(_ change: Delivery<ConnectionID>.Change) -> [UInt8] {
        let (isMerge, path, data) = pushParts(change)
        return ServerMessage.push(merge: isMerge, path: path, data: data, tag: nil)
    }

    /// Whether a change is a merge, its path, and its data encoded once.
    private static func pushParts(_ change: Delivery<ConnectionID>.Change) -> (Bool, Path, [UInt8]) {
        switch change {
        case .put(let at, let node): (false, at, ServerMessage.data(node))
        case .merge(let at, let entries): (true, at, ServerMessage.mergeData(entries))
        }
    }
}
