@testable import KindlingCore
@testable import KindlingSync

/// Runs one sync-point scenario against a fresh `SyncTree`, step by step, as the JavaScript SDK's
/// own harness does (`test/helpers/syncpoint-util.ts`), and checks the events of every step.
struct SyncPointSpecRunner {
    /// Prepended to every path of the scenario (the harness runs each scenario at the root and
    /// again below `foo/bar/baz`).
    let prefix: Path
    var tree = SyncTree()
    var registrationsByCallback: [String: RegistrationID] = [:]
    /// The listen step each registration came from: events are attributed to its path and query.
    var listenOf: [RegistrationID: (path: Path, queryID: String)] = [:]
    var nextRegistration = 0
    var nextWriteID = 0
    /// The server listens in force, to catch duplicate starts and stray stops.
    var serverListens: Set<ServerListen> = []
    /// Steps run and events compared, to show the scenarios were really exercised.
    var stepCount = 0
    var eventCount = 0

    init(prefix: Path) { self.prefix = prefix }

    func path(_ json: JSONValue?) throws -> Path {
        prefix.appending(try Path(json?.stringValue ?? ""))
    }

    /// Runs every step of a scenario; throws at the first step that fails.
    mutating func run(_ scenario: JSONValue) throws {
        guard case .array(let steps)? = scenario["steps"] else { throw SpecError("a scenario needs steps") }
        for (number, step) in steps.enumerated() {
            do {
                try run(step: step)
            } catch {
                throw SpecError("step \(number) (\(step["type"]?.stringValue ?? "?")): \(error)")
            }
        }
    }

    mutating func run(step: JSONValue) throws {
        guard case .object(let rawMembers) = step else { throw SpecError("a step must be an object") }
        let members = rawMembers.filter { $0.key != ".comment" && $0.key != "debug" }
        let type = step["type"]?.stringValue ?? ""
        let expected = try expectedEvents(step["events"])
        stepCount += 1
        eventCount += expected.count
        func allow(_ names: Set<String>) throws {
            if let odd = members.first(where: { !names.contains($0.key) }) {
                throw SpecError("unexpected property \"\(odd.key)\"")
            }
        }
        switch type {
        case "listen":
            try allow(["type", "path", "params", "events", "callbackId"])
            let path = try path(step["path"])
            let query = try step["params"].map(SyncPointSpecRunner.query) ?? .all
            let registration = registration(for: step["callbackId"], path: path, query: query)
            let events = tree.addListen(path: path, query: query, registration: registration)
            try trackListens()
            try SyncPointSpecRunner.exactMatch(expected, events)
        case "unlisten":
            try allow(["type", "path", "callbackId", "events"])
            let path = try path(step["path"])
            guard let id = step["callbackId"].map(JSONWriter.string), let registration = registrationsByCallback[id] else {
                throw SpecError("no earlier listen with this callbackId")
            }
            let events = tree.removeListen(path: path, query: .all, registration: registration)
            try trackListens()
            try SyncPointSpecRunner.exactMatch(expected, events)
        case "serverUpdate":
            try allow(["type", "path", "data", "tag", "events"])
            let node = try SpecData.node(step["data"] ?? .null)
            let events = tree.applyServerOverwrite(path: try path(step["path"]), node: node, tag: try tag(step["tag"]))
            try setMatch(expected, events)
        case "serverMerge":
            try allow(["type", "path", "data", "tag", "events"])
            let changes = try SpecData.mergeChanges(step["data"] ?? .null)
            let events = tree.applyServerMerge(path: try path(step["path"]), changes: changes, tag: try tag(step["tag"]))
            try setMatch(expected, events)
        case "set":
            try allow(["type", "path", "data", "visible", "events"])
            let node = try SpecData.node(step["data"] ?? .null)
            let visible = step["visible"]?.boolValue ?? true
            let path = try path(step["path"])
            let events = tree.applyUserOverwrite(path: path, node: node, writeID: nextWriteID, visible: visible)
            nextWriteID += 1
            try setMatch(expected, events)
        case "update":
            try allow(["type", "path", "data", "events"])
            let changes = try SpecData.mergeChanges(step["data"] ?? .null)
            let events = tree.applyUserMerge(path: try path(step["path"]), changes: changes, writeID: nextWriteID)
            nextWriteID += 1
            try setMatch(expected, events)
        case "ackUserWrite":
            try allow(["type", "writeId", "revert", "events"])
            guard let writeID = step["writeId"]?.numberValue else { throw SpecError("ackUserWrite needs a writeId") }
            let events = tree.ackUserWrite(writeID: Int(writeID), revert: step["revert"]?.boolValue ?? false)
            try setMatch(expected, events)
        case "suppressWarning":
            break
        default:
            throw SpecError("unknown step type \"\(type)\"")
        }
        try trackListens()
        try checkChildOrders()
    }

    /// Every view's sorted children must match its event cache, without repairs: the changes
    /// of every step describe exactly how the cache changed.
    func checkChildOrders() throws {
        var problems: [String] = []
        tree.syncPoints.forEach { path, syncPoint in
            for view in syncPoint.views {
                let node = view.cache.eventCache.node
                let expected = node.children(by: view.query.index).map(\.key)
                let actual = view.order.keys
                let keyOrdered = view.query.index == .key
                if view.order.repairs > 0 || (!keyOrdered && actual != expected) {
                    problems.append("\(path) \(view.queryID): order \(actual), cache \(expected), \(view.order.repairs) repairs")
                }
            }
        }
        if let problem = problems.first { throw SpecError("child order out of step: \(problem)") }
    }

    func expectedEvents(_ json: JSONValue?) throws -> [SpecExpectedEvent] {
        guard let json else { return [] }
        guard case .array(let events) = json else { throw SpecError("events must be an array") }
        return try events.map { event throws(SpecError) in try SpecExpectedEvent(event) }
    }

    func tag(_ json: JSONValue?) throws -> Int? {
        guard let json else { return nil }
        guard let number = json.numberValue else { throw SpecError("a tag must be a number") }
        return Int(number)
    }

    /// The registration for a listen: the one made earlier under the same `callbackId`, or a new one.
    mutating func registration(for callbackID: JSONValue?, path: Path, query: Query) -> RegistrationID {
        let id = callbackID.map(JSONWriter.string)
        if let id, let existing = registrationsByCallback[id] { return existing }
        let registration = RegistrationID(nextRegistration)
        nextRegistration += 1
        if let id { registrationsByCallback[id] = registration }
        listenOf[registration] = (path, query.identifier)
        return registration
    }

    /// Applies the tree's listen changes to the listens in force, as the harness's listen
    /// provider does: starting a listen twice or stopping one not started is an error.
    mutating func trackListens() throws {
        for change in tree.takeListenChanges() {
            switch change {
            case .start(let listen):
                guard serverListens.insert(listen).inserted else { throw SpecError("duplicate listen \(listen)") }
            case .stop(let listen):
                guard serverListens.remove(listen) != nil else {
                    throw SpecError("stopping a listen never started: \(listen)")
                }
            }
        }
    }

    /// The query a listen's `params` describe, built as the harness does: each parameter applied
    /// in the order written, `tag` required but not used (the tree assigns tags itself).
    static func query(_ params: JSONValue) throws -> Query {
        guard case .object(let members) = params else { throw SpecError("params must be an object") }
        guard params["tag"] != nil else { throw SpecError("non-default queries must have a tag") }
        var query = Query()
        for member in members {
            let value = member.value
            switch member.key {
            case "tag": continue
            case "limitToFirst", "limitToLast":
                guard let count = value.numberValue else { throw SpecError("a limit must be a number") }
                query.limit = QueryLimit(count: Int(count), fromEnd: member.key == "limitToLast")
            case "startAt":
                query.start = try bound(value, index: query.index, unnamed: .min, inclusive: true)
            case "startAfter":
                // Without a name, the bound sorts after every child with the value (except by key).
                let unnamed: BoundName = query.index == .key ? .min : .max
                query.start = try bound(value, index: query.index, unnamed: unnamed, inclusive: false)
            case "endAt":
                query.end = try bound(value, index: query.index, unnamed: .max, inclusive: true)
            case "endBefore":
                let unnamed: BoundName = query.index == .key ? .max : .min
                query.end = try bound(value, index: query.index, unnamed: unnamed, inclusive: false)
            case "equalTo":
                query.start = try bound(value, index: query.index, unnamed: .min, inclusive: true)
                query.end = try bound(value, index: query.index, unnamed: .max, inclusive: true)
            case "orderBy":
                query.index = .child(try Path(value.stringValue ?? ""))
            case "orderByKey":
                query.index = .key
            case "orderByPriority":
                query.index = .priority
            default:
                throw SpecError("unsupported query parameter \(member.key)")
            }
        }
        return query
    }

    /// `{index: value, name: key}` as a bound.
    static func bound(_ json: JSONValue, index: Index, unnamed: BoundName, inclusive: Bool) throws -> QueryBound {
        var name = unnamed
        if let text = json["name"]?.stringValue { name = .key(try Key(text)) }
        return QueryBound(value: try SpecData.node(json["index"] ?? .null), name: name, inclusive: inclusive)
    }
}
