import Dispatch
import Foundation
import KindlingCore
import KindlingServer
import Logging

/// Re-reads `kindling serve --rules FILE` on SIGHUP (`HangupSignal` calls `reloadNow`) and when
/// the file changes (checked every two seconds), and puts the new rules in force; a version that
/// does not load is logged with its line and column, and the rules in force stay.
final class RulesFileWatcher: @unchecked Sendable {
    private let path: String
    private let server: KindlingServer
    private let logger: Logger
    private let queue = DispatchQueue(label: "kindling.rules-file")
    // Confined to `queue`.
    private var lastText: String?
    private var sources: [any DispatchSourceProtocol] = []

    init(path: String, server: KindlingServer, logger: Logger, loadedText: String?) {
        self.path = path
        self.server = server
        self.logger = logger
        self.lastText = loadedText
    }

    func start() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 2, repeating: 2)
        timer.setEventHandler { [weak self] in self?.reload(force: false) }
        timer.resume()
        queue.sync { sources = [timer] }
    }

    /// Reads the file now, whether it changed or not (SIGHUP).
    func reloadNow() {
        queue.async { [weak self] in self?.reload(force: true) }
    }

    func stop() {
        queue.sync {
            for source in sources { source.cancel() }
            sources = []
        }
    }

    /// Confined to `queue`.
    private func reload(force: Bool) {
        guard let data = FileManager.default.contents(atPath: path) else {
            if force { logger.error("cannot read the rules file; the rules in force stay", metadata: ["file": "\(path)"]) }
            return
        }
        let text = String(decoding: data, as: UTF8.self)
        guard force || text != lastText else { return }
        lastText = text
        do throws(RulesError) {
            server.replaceRules(try RulesDocument.parse(text))
            logger.notice("rules reloaded", metadata: ["file": "\(path)"])
        } catch {
            logger.error("the rules file does not load; the rules in force stay: \(error)", metadata: ["file": "\(path)"])
        }
    }
}
