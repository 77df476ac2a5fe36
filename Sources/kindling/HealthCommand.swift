import ArgumentParser
import Foundation
import NIOHTTP1

/// `kindling health`: asks a server whether it is alive (`/.health`) or ready (`/.ready`), for
/// container health checks and supervisors, so an image needs no curl or wget to probe it.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 when the server answers its health check with 200, else 1 (for HEALTHCHECK and supervisors).",
        discussion: """
            Examples:
              kindling health                                   # http://127.0.0.1:9000/.health
              kindling health --ready --url http://10.0.0.5:9000
            """
    )

    @Option(help: "URL of the server (also KINDLING_URL; default http://127.0.0.1:9000).")
    var url: String?

    @Flag(help: "Ask whether it is ready (recovered and accepting writes: /.ready) instead of alive (/.health).")
    var ready = false

    @Option(help: "Seconds to wait for the answer.")
    var timeout = 5.0

    func validate() throws {
        guard timeout >= 0.1, timeout <= 600 else { throw ValidationError("--timeout must be between 0.1 and 600 seconds.") }
    }

    func run() async throws {
        let base = url ?? ProcessInfo.processInfo.environment["KINDLING_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:9000"
        let server = try RemoteTarget(url: base, namespace: nil).server
        guard let endpoint = URL(string: server + (ready ? "/.ready" : "/.health")) else { throw ValidationError("Invalid URL \(base).") }
        let request = ServerRequest(method: .GET, url: endpoint, timeout: .milliseconds(Int64(timeout * 1000)))
        let status: Int
        do {
            status = try await request.send().status
        } catch {
            printError("unhealthy: cannot reach \(endpoint.absoluteString): \(error)")
            throw ExitCode.failure
        }
        guard status == 200 else {
            printError("unhealthy: \(endpoint.absoluteString) answered \(status)")
            throw ExitCode.failure
        }
        print("ok: \(endpoint.absoluteString) answered 200")
    }
}
