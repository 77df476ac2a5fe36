import KindlingCore
import KindlingTesting

/// A writer of the load test: sets `/log/<name>-1` to 1, `/log/<name>-2` to 2, and so on, one
/// at a time. A write that is refused or not answered is sent again, unchanged, until it is
/// acknowledged (as the SDKs retry): the same key and value, so a repeat of a write that was
/// made changes nothing. When a node cannot be reached it goes on with the next of `ports`.
struct LoadWriter: Sendable {
    let name: String
    let realtime: Bool
    let ports: [Int]

    /// Writes until `stop` (finishing the write under way) or `giveUp`; returns what was acknowledged.
    func run(namespace: String, stop: StopSignal, giveUp: ContinuousClock.Instant) async throws -> [LoadAck] {
        var acks: [LoadAck] = []
        var client: TestClient?
        var portIndex = 0
        var value = 1
        var attempts = 0
        while ContinuousClock.now < giveUp, !(stop.isSet && attempts == 0) {
            let port = ports[portIndex % ports.count]
            let path = "/log/\(name)-\(value)"
            let sent = ContinuousClock.now
            attempts += 1
            var acknowledged = false
            do {
                if realtime {
                    let connected: TestClient
                    if let client {
                        connected = client
                    } else {
                        connected = try await TestClient.connect(port: port, namespace: namespace)
                        client = connected
                    }
                    let replies = try await connected.request("p", try JSONParser.parse(#"{"p":"\#(path)","d":\#(value)}"#), timeout: .seconds(8))
                    acknowledged = replies.last?["d"]?["b"]?["s"]?.stringValue == "ok"
                } else {
                    let response = try await TestHTTPConnection.request(
                        port: port, "PUT", "\(path).json?ns=\(namespace)", body: "\(value)", timeout: .seconds(8))
                    acknowledged = response.status == 200
                }
            } catch {
                // The node is gone (or did not answer in time): go on with the next one.
                await client?.abort()
                client = nil
                portIndex += 1
            }
            if acknowledged {
                let ack = LoadAck(writer: name, value: value, sent: sent, repeats: attempts - 1, acknowledged: ContinuousClock.now)
                acks.append(ack)
                stop.record(ack)
                value += 1
                attempts = 0
            } else {
                // Deliberate pacing: a load writer's pause before it sends the write again.
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        await client?.close()
        return acks
    }
}
