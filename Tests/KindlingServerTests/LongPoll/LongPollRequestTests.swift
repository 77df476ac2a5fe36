import Testing

@testable import KindlingServer

/// A request at `/.lp` is read as the SDK sends it, and every number it carries is range-checked.
struct LongPollRequestTests {
    @Test func theSDKsRequestsAreRead() throws {
        #expect(
            try LongPollRequest(parameters: ["start": "t", "ser": "123", "cb": "4", "v": "5", "ns": "demo"])
                == .start(callback: "4", lastSession: nil))
        #expect(try LongPollRequest(parameters: ["start": "t", "cb": "12", "ls": "3-99"]) == .start(callback: "12", lastSession: "3-99"))
        #expect(try LongPollRequest(parameters: ["dframe": "t", "id": "3-9", "pw": "ab"]) == .disconnectFrame(id: "3-9", password: "ab"))
        #expect(try LongPollRequest(parameters: ["id": "3-9", "pw": "ab", "ser": "77"]) == .poll(id: "3-9", password: "ab", segments: []))
        let request = try LongPollRequest(parameters: [
            "id": "3-9", "pw": "ab", "ser": "1", "seg0": "4", "ts0": "2", "d0": "eyJ", "seg1": "5", "ts1": "2", "d1": "9",
        ])
        #expect(
            request
                == .poll(
                    id: "3-9", password: "ab",
                    segments: [.init(number: 4, total: 2, data: Array("eyJ".utf8)), .init(number: 5, total: 2, data: [57])]))
    }

    @Test func badNumbersAndMissingPartsAreRefused() {
        let refused: [[String: String]] = [
            ["start": "t"],
            ["start": "t", "cb": "x1"],
            ["start": "t", "cb": "12345678901234567"],
            ["id": "3-9"],
            ["pw": "ab"],
            ["id": String(repeating: "1", count: 65), "pw": "ab"],
            ["id": "3-9", "pw": "ab", "ser": "-1"],
            ["id": "3-9", "pw": "ab", "seg0": "1"],
            ["id": "3-9", "pw": "ab", "seg0": "-1", "ts0": "1", "d0": "x"],
            ["id": "3-9", "pw": "ab", "seg0": "1", "ts0": "9999999999", "d0": "x"],
            ["id": "3-9", "pw": "ab", "seg0": "99999999999999999999", "ts0": "1", "d0": "x"],
        ]
        for parameters in refused {
            #expect(throws: LongPollRequestError.self, "\(parameters)") { try LongPollRequest(parameters: parameters) }
        }
        var many: [String: String] = ["id": "3-9", "pw": "ab"]
        for index in 0...LongPollRequest.maxSegments { many["seg\(index)"] = "\(index)"; many["ts\(index)"] = "1"; many["d\(index)"] = "e30." }
        #expect(throws: LongPollRequestError.self) { try LongPollRequest(parameters: many) }
    }
}
