import KioskCore
import XCTest

/// The backoff for failed network video: steps of 1 s doubling to the 60 s cap, each delay within ±25 % of its step
/// and never past the cap, a reset after a success, and the injected random source deciding where in its range a
/// delay falls.
final class RetryBackoffTests: XCTestCase {
    /// Hands out the draws given, in turn.
    private final class Draws {
        var values: [Double]
        init(_ values: [Double]) { self.values = values }
        func next() -> Double { values.isEmpty ? 0.5 : values.removeFirst() }
    }

    func testStepsDoubleFromOneSecondToTheCap() {
        let backoff = RetryBackoff()
        let steps = (0..<9).map { backoff.step(after: $0) }
        XCTAssertEqual(steps, [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        XCTAssertEqual(backoff.step(after: 10_000), .seconds(60), "no overflow after a very long outage")
    }

    func testTheDrawPlacesEachDelayWithinItsJitteredStep() {
        let draws = Draws([0, 1, 0.5, 0, 1, 1, 1, 0])
        var backoff = RetryBackoff(random: draws.next)
        let delays = (0..<8).map { _ in backoff.nextDelay() }
        XCTAssertEqual(delays, [
            .milliseconds(750),     // 1 s, lowest
            .milliseconds(2500),    // 2 s, highest
            .seconds(4),            // 4 s, the middle
            .seconds(6),            // 8 s, lowest
            .seconds(20),           // 16 s, highest
            .seconds(40),           // 32 s, highest
            .seconds(60),           // 60 s, highest: held to the cap
            .seconds(45),           // 60 s, lowest
        ])
        XCTAssertEqual(backoff.failures, 8)
    }

    func testRandomDelaysStayWithinTheirBoundsAndSpread() {
        var generator = SystemRandomNumberGenerator()
        var backoff = RetryBackoff(random: { Double.random(in: 0...1, using: &generator) })
        var firstDelays: Set<Duration> = []
        for _ in 0..<50 {
            for failure in 0..<10 {
                let delay = backoff.nextDelay()
                let bounds = backoff.bounds(after: failure)
                XCTAssertTrue(bounds.contains(delay), "delay \(failure): \(delay) outside \(bounds)")
                XCTAssertLessThanOrEqual(delay, .seconds(60))
                if failure == 0 { firstDelays.insert(delay) }
            }
            backoff.reset()
        }
        XCTAssertEqual(backoff.bounds(after: 0), .milliseconds(750) ... .milliseconds(1250))
        XCTAssertEqual(backoff.bounds(after: 6), .seconds(45) ... .seconds(60))
        XCTAssertGreaterThan(firstDelays.count, 10, "kiosks that failed together do not retry in step")
    }

    func testResetStartsAgainFromTheFirstStep() {
        var backoff = RetryBackoff(random: { 0.5 })
        XCTAssertEqual((0..<4).map { _ in backoff.nextDelay() }, [1, 2, 4, 8].map { Duration.seconds($0) })
        backoff.reset()
        XCTAssertEqual(backoff.failures, 0)
        XCTAssertEqual(backoff.nextDelay(), .seconds(1))
    }

    func testAWildDrawIsHeldToTheRange() {
        let draws = Draws([-3, 7, .nan])
        var backoff = RetryBackoff(initial: .seconds(2), maximum: .seconds(10), jitter: 0.5, random: draws.next)
        XCTAssertEqual(backoff.nextDelay(), .seconds(1), "below 0 counts as 0: half the 2 s step")
        XCTAssertEqual(backoff.nextDelay(), .seconds(6), "above 1 counts as 1: 4 s and half again")
        XCTAssertEqual(backoff.nextDelay(), .seconds(8), "not a number counts as the middle")
    }
}
