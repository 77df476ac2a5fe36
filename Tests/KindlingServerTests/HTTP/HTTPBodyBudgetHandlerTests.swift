import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import KindlingServer

/// A request body's count against the budget of requests in progress, on an embedded channel.
struct HTTPBodyBudgetHandlerTests {
    func channel(budget: InFlightBudget) throws -> (EmbeddedChannel, HTTPBodyBudgetHandler) {
        var logger = Logger(label: "kindling-body-budget-test")
        logger.logLevel = .critical
        let handler = HTTPBodyBudgetHandler(budget: budget, logger: logger)
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(handler)
        return (channel, handler)
    }

    func receiveBody(_ bytes: Int, on channel: EmbeddedChannel) throws {
        try channel.writeInbound(HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .PUT, uri: "/a.json")))
        try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(repeating: 0x61, count: bytes)))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
    }

    @Test func aBodyIsGivenBackWhenTheConnectionCloses() throws {
        let budget = InFlightBudget(limit: 1 << 20)
        let (channel, _) = try channel(budget: budget)
        try receiveBody(1000, on: channel)
        #expect(budget.inUse == 1000)
        _ = try channel.finish(acceptAlreadyClosed: true)
        #expect(budget.inUse == 0)
    }

    /// The parse of a body goes on after its client hangs up, and holds the body meanwhile.
    @Test func aBodyHandedToItsParseStaysCountedAfterTheConnectionCloses() throws {
        let budget = InFlightBudget(limit: 1 << 20)
        let (channel, handler) = try channel(budget: budget)
        try receiveBody(1000, on: channel)
        var hold = handler.handOverBody()
        #expect(hold?.bytes == 1000)
        _ = try channel.finish(acceptAlreadyClosed: true)
        #expect(budget.inUse == 1000)
        hold = nil
        #expect(budget.inUse == 0)
    }
}
