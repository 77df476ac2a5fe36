import KindlingBench
import Testing

@Suite("write pacing")
struct WritePacerTests {
    @Test("flat out, limited by the window over what every subscriber has received")
    func window() {
        let pacer = WritePacer(total: 100, rate: 0, window: 4, subscribers: 10)
        #expect(pacer.allowance(sent: 0, elapsedNanoseconds: 0, deliveries: 0) == 4)
        #expect(pacer.allowance(sent: 4, elapsedNanoseconds: 0, deliveries: 19) == 1)
        #expect(pacer.allowance(sent: 98, elapsedNanoseconds: 0, deliveries: 980) == 2)
    }

    @Test("paced: no more than the rate allows since the start")
    func rate() {
        let pacer = WritePacer(total: 100, rate: 1000, window: 50, subscribers: 1)
        #expect(pacer.allowance(sent: 0, elapsedNanoseconds: 0, deliveries: 0) == 1)
        #expect(pacer.allowance(sent: 1, elapsedNanoseconds: 10_000_000, deliveries: 1) == 10)
    }
}
