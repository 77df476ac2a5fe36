import Logging
import NIOPosix

@testable import KindlingServer

/// What a server's connections share (its namespaces, budgets, metrics and worker threads),
/// built as `KindlingServer.start` builds it but without a socket, so a handler can be tested on
/// an embedded channel.
struct EmbeddedServer: Sendable {
    let configuration: ServerConfiguration
    let registry: NamespaceRegistry
    let resources: ServerResources

    /// Runs `body` with a server configured by `adjust` (in memory, quiet logs); its worker
    /// threads stop afterwards.
    static func with(_ adjust: (inout ServerConfiguration) -> Void = { _ in }, _ body: (EmbeddedServer) async throws -> Void) async throws {
        var logger = Logger(label: "kindling-embedded-test")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(port: 0, logger: logger)
        adjust(&configuration)
        let budget = InFlightBudget(limit: configuration.inFlightBudgetBytes)
        let metrics = ServerMetrics(topNamespaces: configuration.metricsTopNamespaces)
        var limits = configuration.connectionLimits
        limits.maxAnswerBytes = configuration.maxPendingOutboundBytes
        let registry = NamespaceRegistry(
            logger: logger, storage: nil, rules: configuration.defaultRules, rulesDebug: configuration.rulesDebug, limits: limits,
            maxNamespaces: configuration.maxNamespaces, answerBudget: budget, metrics: metrics
        )
        let workers = NIOThreadPool(numberOfThreads: 1)
        workers.start()
        let maxConnections = configuration.maxConnections ?? 1024
        let resources = ServerResources(
            budget: budget,
            backlogBudget: InFlightBudget(limit: configuration.pendingOutboundBudgetBytes),
            idle: IdleConnections(),
            overLimit: OverLimitConnections(limit: maxConnections),
            maxConnections: maxConnections,
            policy: BrowserAccessPolicy(configuration: configuration),
            workers: workers,
            verifier: try CredentialVerifier(settings: configuration.auth),
            metrics: metrics,
            health: ServerHealth(metrics: metrics),
            perEventLoop: PerEventLoop(idleTimeout: configuration.idleTimeout, parseBudget: budget),
            longPolls: LongPollSessions(limit: maxConnections)
        )
        do {
            try await body(EmbeddedServer(configuration: configuration, registry: registry, resources: resources))
        } catch {
            try? await workers.shutdownGracefully()
            throw error
        }
        try await workers.shutdownGracefully()
    }
}
