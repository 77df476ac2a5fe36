import AsyncHTTPClient
import Foundation
import KindlingCore
import NIOCore
import NIOHTTP1

/// Reads a namespace's profiler stream (`GET /.settings/profile.json`, as `firebase
/// database:profile` asks for it) until told to stop, handing on each `log` and `gap` event as
/// it comes: nothing is kept here, so a long recording of a busy server takes no more memory
/// than what is done with the events. `kindling migrate` follows a source database's data
/// stream (`GET /<path>.json`, all its events) with it too.
struct ProfileCollector {
    /// Why recording stopped.
    enum Stop: Sendable, Equatable {
        /// The duration passed.
        case elapsed
        /// The user asked (Enter, Ctrl-C).
        case asked
        /// The server ended the stream, or the connection broke (with why, when it was not
        /// a clean end).
        case ended(String?)
    }

    /// What kept the stream from being recorded.
    enum Failure: Error {
        case unreachable(String)
        case refused(status: Int, message: String)
    }

    let url: URL
    /// The bearer token sent (nil sends none).
    var credential: String? = adminCredential
    /// The events handed on; nil hands on all of them.
    var eventNames: Set<String>? = ["log", "gap"]
    /// The longest event line read.
    var maxLineBytes = ServerSentEvents.maxLineBytes

    /// Opens the stream, then hands `receive` its `log` and `gap` events, in order, until
    /// `stops` says so or the stream ends.
    func record(until stops: AsyncStream<Stop>, receive: @escaping @Sendable (ServerSentEvents.Event) -> Void) async throws(Failure) -> Stop {
        let client: HTTPClient
        do {
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try ServerRequest.configuration())
        } catch {
            throw .unreachable(error.description)
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let credential { request.headers.add(name: "Authorization", value: "Bearer \(credential)") }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .seconds(30))
        } catch {
            try? await client.shutdown()
            throw .unreachable(ConnectionFailure.reason(error))
        }
        guard response.status == .ok else {
            let body = (try? await response.body.collect(upTo: 1 << 20)).map { Array($0.readableBytesView) } ?? []
            try? await client.shutdown()
            let message = (try? JSONParser.parse(body))?["error"]?.stringValue ?? String(decoding: body, as: UTF8.self)
            throw .refused(status: Int(response.status.code), message: message)
        }
        let names = eventNames
        let longest = maxLineBytes
        let reader = Task { () -> Stop in
            var events = ServerSentEvents()
            events.maxLineBytes = longest
            do {
                for try await chunk in response.body {
                    for event in try events.read(chunk.readableBytesView) where names?.contains(event.name) ?? true {
                        receive(event)
                    }
                }
                return .ended(nil)
            } catch {
                return .ended(Task.isCancelled ? nil : "\(error)")
            }
        }
        let stop = await withTaskGroup(of: Stop.self) { group in
            group.addTask {
                for await stop in stops { return stop }
                return .asked
            }
            group.addTask { await reader.value }
            let first = await group.next() ?? .asked
            // The reader ends once cancelled, which lets the group's wait for it end too.
            reader.cancel()
            group.cancelAll()
            return first
        }
        _ = await reader.value
        try? await client.shutdown()
        return stop
    }
}
