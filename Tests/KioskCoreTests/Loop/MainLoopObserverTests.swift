import KioskCore
import XCTest

final class MainLoopObserverTests: XCTestCase {
    func testBeforeWaitingObserversRunInAscendingOrderWithTiesInRegistrationOrder() {
        let (loop, _) = MainLoop.manual()
        var calls: [String] = []
        loop.addObserver(order: ObserverOrder.commit, activities: .beforeWaiting) { _ in calls.append("commit") }
        loop.addObserver(order: ObserverOrder.layout, activities: .beforeWaiting) { _ in calls.append("layout") }
        loop.addObserver(order: ObserverOrder.animations, activities: .beforeWaiting) { _ in calls.append("animations") }
        loop.addObserver(order: ObserverOrder.render, activities: .beforeWaiting) { _ in calls.append("display") }
        loop.addObserver(order: ObserverOrder.layout, activities: .beforeWaiting) { _ in calls.append("layout, second") }
        loop.addObserver(order: -1, activities: .beforeWaiting) { _ in calls.append("first") }

        loop.runOnce(timeout: .zero)

        XCTAssertEqual(calls, ["first", "animations", "layout", "layout, second", "display", "commit"])
    }

    func testObserversRunBeforeTheLoopWaitsWithTheBeforeWaitingActivity() {
        let (loop, poller) = MainLoop.manual()
        var seen: [(activity: LoopActivities, waitsSoFar: Int)] = []
        loop.addObserver(order: 0, activities: .beforeWaiting) { activity in seen.append((activity, poller.waitCount)) }

        loop.runOnce(timeout: .zero)
        loop.runOnce(timeout: .zero)

        XCTAssertEqual(seen.map(\.activity), [.beforeWaiting, .beforeWaiting])
        XCTAssertEqual(seen.map(\.waitsSoFar), [0, 1])
    }

    func testEachObserverRunsExactlyOncePerIteration() {
        let (loop, _) = MainLoop.manual()
        var counts = [0, 0]
        loop.addObserver(order: ObserverOrder.layout, activities: .beforeWaiting) { _ in counts[0] += 1 }
        loop.addObserver(order: ObserverOrder.commit, activities: [.beforeWaiting, .exit]) { _ in counts[1] += 1 }

        for _ in 0..<3 { loop.runOnce(timeout: .zero) }

        XCTAssertEqual(counts, [3, 3])
        XCTAssertEqual(loop.iterations, 3)
    }

    func testCancelledObserverDoesNotRun() {
        let (loop, _) = MainLoop.manual()
        var calls: [String] = []
        let cancelled = loop.addObserver(order: 1, activities: .beforeWaiting) { _ in calls.append("cancelled") }
        loop.addObserver(order: 2, activities: .beforeWaiting) { _ in calls.append("kept") }

        cancelled.cancel()
        loop.runOnce(timeout: .zero)

        XCTAssertEqual(calls, ["kept"])
    }

    func testObserverCancelledByAnEarlierObserverDoesNotRunLaterInThatIteration() {
        let (loop, _) = MainLoop.manual()
        var calls: [String] = []
        var later: ObserverHandle?
        loop.addObserver(order: 1, activities: .beforeWaiting) { _ in
            calls.append("earlier")
            later?.cancel()
        }
        later = loop.addObserver(order: 2, activities: .beforeWaiting) { _ in calls.append("later") }

        loop.runOnce(timeout: .zero)
        loop.runOnce(timeout: .zero)

        XCTAssertEqual(calls, ["earlier", "earlier"])
    }

    func testObserverCanCancelItself() {
        let (loop, _) = MainLoop.manual()
        var runs = 0
        var handle: ObserverHandle?
        handle = loop.addObserver(order: 0, activities: .beforeWaiting) { _ in
            runs += 1
            handle?.cancel()
        }

        for _ in 0..<3 { loop.runOnce(timeout: .zero) }

        XCTAssertEqual(runs, 1)
    }

    func testObserverAddedDuringAnIterationRunsFromTheNextOne() {
        let (loop, _) = MainLoop.manual()
        var calls: [String] = []
        var added = false
        loop.addObserver(order: 1, activities: .beforeWaiting) { _ in
            calls.append("adder")
            guard !added else { return }
            added = true
            // Its order would put it later in this very iteration; it must still wait for the next one.
            loop.addObserver(order: 2, activities: .beforeWaiting) { _ in calls.append("added") }
        }

        loop.runOnce(timeout: .zero)
        XCTAssertEqual(calls, ["adder"])

        loop.runOnce(timeout: .zero)
        XCTAssertEqual(calls, ["adder", "adder", "added"])
    }

    func testObserverAddedByATimerRunsFromTheNextIteration() {
        let (loop, _) = MainLoop.manual()
        var observerRuns = 0
        loop.addTimer(after: .seconds(1)) {
            loop.addObserver(order: 0, activities: .beforeWaiting) { _ in observerRuns += 1 }
        }

        loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(observerRuns, 0)

        loop.runOnce(timeout: .zero)
        XCTAssertEqual(observerRuns, 1)
    }
}
