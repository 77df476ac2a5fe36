import AsyncHTTPClient
import Foundation
import KindlingCore
import NIOCore
import NIOHTTP1
import Synchronization

/// Records a namespace's profiler stream (`GET /.settings/profile.json`, as `firebase
/// database:profile` asks for it) until told to stop: the data of its `log` events and of any
/// `gap` event, in order, which is what `--raw` prints and `--input` reads.
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

    /// Opens the stream, then records until `stops` says so or the stream ends; `progress` is
    /// told how many operations came, as they come.
    func record(until stops: AsyncStream<Stop>, progress: @escaping @Sendable (Int) -> Void) async throws(Failure) -> (lines: [String], stop: Stop) {
        let client: HTTPClient
        do {
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try ServerRequest.configuration())
        } catch {
            throw .unreachable(error.description)
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "Accept", value: "text/event-stream")
        request.headers.add(name: "Authorization", value: "Bearer \(adminCredential)")
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .seconds(30))
        } catch {
            try? await client.shutdown()
            throw .unreachable("\(error)")
        }
        guard response.status == .ok else {
            let body = (try? await response.body.collect(upTo: 1 << 20)).map { Array($0.readableBytesView) } ?? []
            try? await client.shutdown()
            let message = (try? JSONParser.parse(body))?["error"]?.stringValue ?? String(decoding: body, as: UTF8.self)
            throw .refused(status: Int(response.status.code), message: message)
        }
        let lines = Mutex<[String]>([])
        let reader = Task { () -> Stop in
            var events = ServerSentEvents()
            var operations = 0
            do {
                for try await chunk in response.body {
                    for event in try events.read(chunk.readableBytesView) where event.name == "log" || event.name == "gap" {
                        lines.withLock { $0.append(event.data) }
                        if event.name == "log" {
                            operations += 1
                            progress(operations)
                        }
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
        return (lines.withLock { $0 }, stop)
    }
}
