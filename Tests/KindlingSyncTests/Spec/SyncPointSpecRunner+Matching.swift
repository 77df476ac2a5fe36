@testable import KindlingCore
@testable import KindlingSync

/// The harness's two ways of comparing a step's events with the expected ones.
extension SyncPointSpecRunner {
    /// Listen and unlisten steps: the same events in the same order (`eventExactMatch`).
    static func exactMatch(_ expected: [SpecExpectedEvent], _ actual: [Event]) throws {
        if expected.count < actual.count { throw SpecError("got extra events: \(describe(actual))") }
        if expected.count > actual.count { throw SpecError("missing events: \(describe(actual))") }
        for (wanted, event) in zip(expected, actual) where !wanted.exactlyMatches(event) {
            throw SpecError("expected \(describe(wanted)), got \(describe(event)) in \(describe(actual))")
        }
    }

    /// All other steps (`eventSetMatch`): events come in groups by listen path, in the order of
    /// the expected groups; inside a group any order will do, as long as each listen receives
    /// its events in kind order (removed, added, moved, changed, value).
    func setMatch(_ expected: [SpecExpectedEvent], _ actual: [Event]) throws {
        guard expected.count == actual.count else {
            throw SpecError("expected \(expected.count) events, got \(actual.count): \(Self.describe(actual))")
        }
        var remainingExpected = expected[...]
        var remainingActual = actual[...]
        while let first = remainingExpected.first {
            let groupPath = try path(.string(first.path))
            var size = 1
            while size < remainingExpected.count,
                try path(.string(remainingExpected[remainingExpected.startIndex + size].path)) == groupPath
            {
                size += 1
            }
            var unmatched = Array(remainingExpected.prefix(size))
            var lastKind: [String: EventKind] = [:]
            for event in remainingActual.prefix(size) {
                guard let listen = listenOf[event.registration] else { throw SpecError("event for an unknown registration") }
                guard listen.path == groupPath else {
                    throw SpecError("expected an event for \(groupPath), got \(Self.describe(event)) for \(listen.path)")
                }
                let listenID = "\(listen.path)|\(listen.queryID)"
                if let last = lastKind[listenID], last > event.kind {
                    throw SpecError("received \(event.kind.name) after \(last.name) for \(listenID)")
                }
                lastKind[listenID] = event.kind
                guard let index = unmatched.firstIndex(where: { $0.looselyMatches(event) }) else {
                    throw SpecError("no expected event matches \(Self.describe(event)); actual: \(Self.describe(actual))")
                }
                unmatched.remove(at: index)
            }
            remainingExpected = remainingExpected.dropFirst(size)
            remainingActual = remainingActual.dropFirst(size)
        }
    }

    static func describe(_ events: [Event]) -> String {
        "[" + events.map(describe).joined(separator: ", ") + "]"
    }

    static func describe(_ event: Event) -> String {
        var text = "\(event.kind.name) \(event.path)"
        if let key = event.childKey { text += " \(key)" }
        switch SpecExpectedEvent.prevName(of: event) {
        case .absent: break
        case .null: text += " prev=null"
        case .name(let name): text += " prev=\(name)"
        }
        return text + " " + event.node.jsonText(format: .export)
    }

    static func describe(_ event: SpecExpectedEvent) -> String {
        var text = "\(event.kind.name) \(event.path)"
        if let name = event.name { text += " \(name)" }
        switch event.prevName {
        case .absent: break
        case .null: text += " prev=null"
        case .name(let name): text += " prev=\(name)"
        }
        return text + " #\(event.hash)"
    }
}
