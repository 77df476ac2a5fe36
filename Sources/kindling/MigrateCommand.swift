import ArgumentParser
import Foundation
import KindlingCore
import KindlingServer
import Synchronization

/// `kindling migrate`: copies a live Firebase-protocol database (hosted Firebase, or another
/// Kindling) into a namespace, follows its changes until the operator cuts over, then compares
/// both sides.
///
/// Ordering. The source's data stream is opened first, and the walk begins only once its first
/// event (the data at the path as it was when the stream began) has arrived: from then on, every
/// change the source makes is an event in the stream, buffered while the walk and the copy run.
/// Each part the walk reads is therefore at least as new as the stream's start, and may already
/// hold some of the buffered changes. The buffered events are applied after the copy, in the
/// order the source made them: a `put` replaces the data at its path, a `patch` sets each of its
/// members, and both carry the resulting values (server values already resolved), not
/// increments. Applying a change to data that already holds it therefore changes nothing, and
/// applying one to data older than it brings it up to date; so after the replay every path holds
/// what the source's latest change to it wrote, and no event for a part the walk had not read
/// yet is lost or overwritten by the older walk read (the walk's writes all come before any
/// replayed event). Events that arrive after the replay are applied as they come, in order.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Copy a live Firebase or Kindling database into a namespace, follow its changes until cut-over, then compare both sides.",
        discussion: """
            The source (--from, a database URL: https://NAME.firebaseio.com, or \
            http://HOST:PORT?ns=NAME for another Kindling) is read through its REST API: its \
            change stream (Server-Sent Events) is opened first, then the data at --path is \
            walked in small reads, as kindling export does, and written to the target (--url, \
            --ns) in atomic steps of about --chunk-kb, as kindling import does; the first step \
            replaces the data at --path. The changes the source made meanwhile are then applied \
            in order, and later ones as they come, until you cut over: press Enter or Ctrl-C \
            (or give --until-idle SECONDS: stop once the source has been quiet that long). Then \
            both sides are read again and compared, per top-level key: the number of leaf \
            values and a SHA-256 of the canonical JSON.

            --from-auth TOKEN is sent to the source as a bearer token: for hosted Firebase an \
            OAuth access token of an account that may read the database (gcloud auth \
            print-access-token); for a Kindling its admin secret. Such a token lasts an hour.

            --from-credential FILE takes the tokens from a service account key file instead \
            (Firebase console, Project settings, Service accounts, Generate new private key): \
            a new one before each runs out, and when the source ends the change stream because \
            its token expired, the stream is opened again with a new one and the data it starts \
            with is written over the target's, so a migration may follow for as long as it \
            takes. Priorities are not copied.
            Exit codes: 0 copied and equal, 1 refused by a server (or the source ended the \
            stream), 2 a server unreachable, 3 the sides differ, 64 bad arguments.
            Examples:
              kindling migrate --from https://my-app.firebaseio.com --from-credential service-account.json --ns my-app
              kindling migrate --from https://my-app.firebaseio.com --from-auth "$(gcloud auth print-access-token)" --ns my-app
              kindling migrate --from "http://old:9000?ns=chat" --from-auth "$OLD_SECRET" --url http://new:9000 --ns chat --until-idle 30
            """
    )

    /// The exit code when the comparison finds a difference.
    static let differ = ExitCode(3)

    @Option(help: "The source database's URL (https://NAME.firebaseio.com, or http://HOST:PORT?ns=NAME).")
    var from: String

    @Option(name: .customLong("from-auth"), help: "A bearer token for the source (an OAuth access token, or a Kindling's admin secret).")
    var fromAuth: String?

    @Option(
        name: .customLong("from-credential"),
        help: "A service account key file (JSON) whose OAuth tokens read the source, renewed as they run out (hosted Firebase).")
    var fromCredential: String?

    @Option(help: "The path copied, on both sides.")
    var path = "/"

    @OptionGroup var remote: RemoteOptions

    @Option(name: .customLong("chunk-kb"), help: "About how much one read and one atomic write holds, in KB (1 to 262144).")
    var chunkKilobytes = 1024

    @Option(name: .customLong("until-idle"), help: "Cut over once the source has sent no change for this many seconds (for scripts).")
    var untilIdle: Int?

    func validate() throws {
        guard (1...256 * 1024).contains(chunkKilobytes) else { throw ValidationError("--chunk-kb must be between 1 and 262144 (256 MB).") }
        if let untilIdle, untilIdle < 1 { throw ValidationError("--until-idle must be at least 1 second.") }
        if fromAuth != nil, fromCredential != nil { throw ValidationError("Give --from-auth or --from-credential, not both.") }
        _ = try parsePath(path)
        _ = try sourceTarget()
    }

    /// The source, read as the SDKs read a database URL; its namespace comes from the URL only.
    private func sourceTarget() throws -> RemoteTarget {
        var source = try RemoteTarget(url: from, namespace: nil)
        guard source.isNamespaceNamed else {
            throw ValidationError("--from \(from) names no database: give https://NAME.firebaseio.com or http://HOST:PORT?ns=NAME.")
        }
        source.credential = fromAuth
        if let fromCredential {
            do throws(ServiceAccountKey.Failure) {
                source.tokens = ServiceAccountTokens(key: try ServiceAccountKey(path: fromCredential))
            } catch {
                throw ValidationError("--from-credential: \(error)")
            }
        }
        return source
    }

    /// What the follow loop takes in, in the order it came; what a stream sent carries the
    /// number of its opening, so an earlier one's end is not taken for the current one's.
    private enum Input: Sendable {
        case event(ServerSentEvents.Event, stream: Int)
        case ended(ProfileCollector.Stop, stream: Int)
        case failed(ProfileCollector.Failure, stream: Int)
        case cutOver
        case tick

        /// The opening of the stream that sent it, if a stream did.
        var stream: Int? {
            switch self {
            case .event(_, let stream), .ended(_, let stream), .failed(_, let stream): stream
            case .cutOver, .tick: nil
            }
        }
    }

    /// One opening of the source's change stream.
    private struct SourceStream {
        let number: Int
        let task: Task<Void, Never>
        let stop: AsyncStream<ProfileCollector.Stop>.Continuation

        func end() {
            stop.yield(.asked)
            task.cancel()
        }
    }

    /// Opens the source's change stream with a current credential; what it sends goes to
    /// `input`, numbered `number`.
    private func open(_ number: Int, _ source: RemoteTarget, into input: AsyncStream<Input>.Continuation) async throws -> SourceStream {
        let collector = ProfileCollector(
            url: try source.restURL(path: path), credential: try await source.bearer(), eventNames: nil, maxLineBytes: 1 << 30)
        let (stops, stop) = AsyncStream<ProfileCollector.Stop>.makeStream()
        let task = Task {
            do throws(ProfileCollector.Failure) {
                input.yield(.ended(try await collector.record(until: stops) { input.yield(.event($0, stream: number)) }, stream: number))
            } catch {
                input.yield(.failed(error, stream: number))
            }
        }
        return SourceStream(number: number, task: task, stop: stop)
    }

    func run() async throws {
        let source = try sourceTarget()
        let target = try remote.target()
        let keys = try parsePath(path).keys.map(\.string)
        let (inputs, input) = AsyncStream<Input>.makeStream()
        var stream = try await open(1, source, into: input)
        defer { stream.end() }
        var iterator = inputs.makeAsyncIterator()
        // The first event is the data as the stream began; the walk reads it afresh.
        printError("migrate: following \(source.databaseURL) at \(path)")
        guard case .event = try await next(&iterator, source: source, stream: stream.number) else { return }
        try await copy(from: source, to: target, keys: keys)
        let cutOver = Self.cutOverSignals(input, idle: untilIdle != nil)
        defer { cutOver.cancel() }
        // Said once Ctrl-C cuts over rather than ends the command.
        printError("migrate: copied; applying the changes made since, and following (Enter or Ctrl-C to cut over)")
        var applied = 0
        var quietSince = ContinuousClock.now
        while true {
            let item = try await next(&iterator, source: source, stream: stream.number)
            switch item {
            case .event(let event, _):
                let change = try Self.read(event)
                if change == .authRevoked, source.tokens != nil {
                    stream.end()
                    stream = try await reopen(stream.number + 1, source, target, keys: keys, inputs: &iterator, input: input)
                    // The data the stream began again with may hold changes no event told (those
                    // made while no stream was open): the source was not quiet until now.
                    quietSince = ContinuousClock.now
                    continue
                }
                try await apply(change, to: target, under: keys, source: source)
                // A keep-alive (every 10 s from Kindling, 30 s from Firebase) is not a change: it
                // must not keep `--until-idle` from ever seeing the source quiet.
                if change != .ignore {
                    applied += 1
                    quietSince = ContinuousClock.now
                }
            case .tick:
                guard let untilIdle, ContinuousClock.now - quietSince >= .seconds(untilIdle) else { continue }
                printError("migrate: the source was quiet for \(untilIdle) s; cutting over")
            case .cutOver:
                printError("migrate: cutting over")
            case .ended, .failed:
                continue
            }
            if case .event = item { continue }
            break
        }
        printError("migrate: \(applied) changes applied after the copy; comparing")
        let equal = try await compare(source, target, keys: keys)
        if !equal { throw Self.differ }
    }

    /// The source revoked the token of the stream (it expired): the stream is opened again with
    /// a new one, and the data it begins with, the source's data as it is now, is written over
    /// the target's, since the changes made while no stream was open are known to no event.
    /// The changes after it are followed as before.
    private func reopen(
        _ number: Int, _ source: RemoteTarget, _ target: RemoteTarget, keys: [String], inputs iterator: inout AsyncStream<Input>.Iterator,
        input: AsyncStream<Input>.Continuation
    ) async throws -> SourceStream {
        printError("migrate: the source ended the change stream because its token expired; opening it again with a new one")
        if let tokens = source.tokens {
            _ = try await RemoteTarget.reported { () async throws(ServiceAccountTokens.Failure) in try await tokens.renew() }
        }
        let stream = try await open(number, source, into: input)
        while true {
            let item = try await next(&iterator, source: source, stream: number)
            // Enter pressed meanwhile is kept for the follow loop: the next tick hands it on.
            if case .cutOver = item { migrateCutOverAsked.store(true, ordering: .relaxed) }
            guard case .event(let event, _) = item else { continue }
            let first = try Self.read(event)
            switch first {
            case .ignore:
                continue
            case .put(let relative, let data) where relative.isEmpty:
                try await replace(with: data, at: target)
                printError("migrate: the data at \(path) as the stream began again is written over the target's; following")
                return stream
            case .authRevoked:
                printError("error: the source revoked the new token at once: is the token endpoint's clock right?")
                throw ClientExit.refused
            case .cancelled:
                // Reported as any cancel is.
                try await apply(first, to: target, under: keys, source: source)
                return stream
            case .put, .patch:
                printError("error: the source's stream began again without the data at \(path) (\(event.name) \(event.data.prefix(200)))")
                throw ClientExit.refused
            }
        }
    }

    /// What a change-stream event asks for; one that cannot be read is reported and ends the
    /// command.
    private static func read(_ event: ServerSentEvents.Event) throws -> MigrationEvent {
        do {
            return try MigrationEvent(name: event.name, data: event.data)
        } catch {
            printError("error: the source sent \(error)")
            throw ClientExit.refused
        }
    }

    /// The next input of stream `stream` (an earlier stream's are passed over); a stream that
    /// ended or failed is reported and ends the command.
    private func next(_ iterator: inout AsyncStream<Input>.Iterator, source: RemoteTarget, stream: Int) async throws -> Input {
        var item: Input
        repeat {
            guard let next = await iterator.next() else { throw ExitCode.failure }
            item = next
        } while item.stream.map { $0 != stream } ?? false
        switch item {
        case .failed(.unreachable(let reason), _):
            printError("error: cannot reach the source \(source.server): \(reason)")
            throw ClientExit.unreachable
        case .failed(.refused(let status, let message), _):
            printError("error: the source answered \(status): \(message)")
            throw ClientExit.refused
        case .ended(let why, _):
            printError("error: the source ended its change stream\(Self.reason(why)); nothing after it can be followed")
            throw ClientExit.refused
        default:
            return item
        }
    }

    private static func reason(_ stop: ProfileCollector.Stop) -> String {
        if case .ended(let reason?) = stop { return " (\(reason))" }
        return ""
    }

    /// The walk of the source written to a file, then imported into the target in atomic steps:
    /// `kindling export` and `kindling import` themselves, so neither side is held whole.
    private func copy(from source: RemoteTarget, to target: RemoteTarget, keys: [String]) async throws {
        try await importFile(into: target) { writer in
            var export = StreamingExport(target: source, exportForm: false, chunkBytes: chunkKilobytes * 1024, output: writer)
            try await export.run(path: keys)
        }
    }

    /// `data` written over the target's at the path, in the copy's atomic steps.
    private func replace(with data: JSONValue, at target: RemoteTarget) async throws {
        try await importFile(into: target) { writer in
            do {
                try writer.write(Array(JSONWriter.string(data).utf8))
            } catch {
                printError("error: \(error)")
                throw ExitCode(74)
            }
        }
    }

    /// What `write` puts in a temporary file, imported into the target at the path in atomic
    /// steps of about `--chunk-kb`, the first replacing what is there.
    private func importFile(into target: RemoteTarget, _ write: (ExportFileWriter) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kindling-migrate-\(target.namespace)-\(ProcessInfo.processInfo.processIdentifier).json"
        ).path
        let position = file + ".import-position"
        defer {
            try? FileManager.default.removeItem(atPath: file)
            try? FileManager.default.removeItem(atPath: position)
        }
        let writer = try ExportFileWriter(path: file, gzip: false)
        try await write(writer)
        try writer.finish()
        try await StreamingImport(
            file: ImportFile(path: file), target: target, path: path, chunkBytes: chunkKilobytes * 1024, positionFile: position,
            resume: false, check: false
        ).run()
    }

    /// Applies one change of the source to the target.
    private func apply(_ change: MigrationEvent, to target: RemoteTarget, under keys: [String], source: RemoteTarget) async throws {
        switch change {
        case .put(let relative, let data):
            _ = try await restRequest("PUT", target.restURL(path: (keys + relative).joined(separator: "/")), body: data)
        case .patch(let relative, let data):
            _ = try await restRequest("PATCH", target.restURL(path: (keys + relative).joined(separator: "/")), body: data)
        case .ignore:
            break
        case .cancelled:
            printError("error: the source cancelled the change stream: its rules no longer let this credential read \(path)")
            throw ClientExit.refused
        case .authRevoked:
            printError(
                "error: the source revoked the credential (expired or withdrawn): give a fresh --from-auth and migrate again,"
                    + " or --from-credential, whose tokens are renewed")
            throw ClientExit.refused
        }
    }

    /// Enter, Ctrl-C and SIGTERM cut over; a tick a second lets `--until-idle` see the quiet and
    /// hands on a signal. The signals get a plain handler that sets a flag (an atomic store is
    /// safe in a handler): a dispatch signal source for SIGINT does not fire again once the
    /// import's own (`InterruptSignal`) has been cancelled.
    private static func cutOverSignals(_ input: AsyncStream<Input>.Continuation, idle: Bool) -> Task<Void, any Error> {
        for number in [SIGINT, SIGTERM] {
            signal(number) { _ in migrateCutOverAsked.store(true, ordering: .relaxed) }
        }
        if !idle {
            // Standard input that ends (a script's /dev/null) leaves Ctrl-C.
            Thread.detachNewThread {
                if readLine() != nil { input.yield(.cutOver) }
            }
        }
        return Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(1))
                input.yield(migrateCutOverAsked.load(ordering: .relaxed) ? .cutOver : .tick)
            }
        }
    }

    /// Reads both sides the same way (each top-level key whole, plain JSON) and prints, per key,
    /// the leaf count and hash of each; true when all agree.
    private func compare(_ source: RemoteTarget, _ target: RemoteTarget, keys: [String]) async throws -> Bool {
        let sourceKeys = try await Self.topLevelKeys(source, keys)
        let targetKeys = try await Self.topLevelKeys(target, keys)
        var table = TextTable(head: ["key", "source values", "target values", "source SHA-256", "target SHA-256", ""])
        var differences = 0
        for key in Set(sourceKeys ?? []).union(targetKeys ?? []).sorted(by: { $0.utf16.lexicographicallyPrecedes($1.utf16) })
            + (sourceKeys == nil || targetKeys == nil ? [""] : [])
        {
            let child = key.isEmpty ? keys : keys + [key]
            let one = try await Self.digest(source, child)
            let other = try await Self.digest(target, child)
            if one != other { differences += 1 }
            table.rows.append([
                key.isEmpty ? "(the value at \(path))" : key, "\(one.leaves)", "\(other.leaves)", String(one.hash.prefix(16)),
                String(other.hash.prefix(16)), one == other ? "equal" : "DIFFERENT",
            ])
        }
        print(table.render())
        print(differences == 0 ? "The source and the target hold the same data." : "\(differences) keys differ.")
        return differences == 0
    }

    /// The keys of the object at `keys`, or nil when it is a leaf or nothing.
    private static func topLevelKeys(_ side: RemoteTarget, _ keys: [String]) async throws -> [String]? {
        let shallow = try await side.get(side.restURL(path: keys.joined(separator: "/"), "&shallow=true"))
        guard case .object(let members) = try JSONParser.parse(shallow) else { return nil }
        return members.map(\.key)
    }

    private static func digest(_ side: RemoteTarget, _ keys: [String]) async throws -> MigrationDigest {
        MigrationDigest(
            try JSONParser.parse(try await side.get(side.restURL(path: keys.joined(separator: "/")))))
    }
}

/// Set by the SIGINT and SIGTERM handlers `kindling migrate` installs for the cut-over.
private let migrateCutOverAsked = Atomic(false)
