import KioskCore
import XCTest

/// Sources over the manual poller's fake descriptors.
final class MainLoopSourceTests: XCTestCase {
    func testReadySourceGetsItsReadyEvents() throws {
        let (loop, poller) = MainLoop.manual()
        var received: [IOEvents] = []
        try loop.addSource(fd: 40, events: .readable) { received.append($0) }
        XCTAssertEqual(poller.registeredEvents(fd: 40), .readable)

        loop.runOnce(timeout: .zero)
        XCTAssertEqual(received, [], "nothing ready yet")

        poller.signalReady(fd: 40, events: .readable)
        loop.runOnce(timeout: .zero)

        XCTAssertEqual(received, [.readable])
        XCTAssertEqual(loop.wakeups, 1)
    }

    func testSourceGetsOnlyWhatItWatchesPlusHangupAndError() throws {
        let (loop, poller) = MainLoop.manual()
        var received: [IOEvents] = []
        try loop.addSource(fd: 41, events: .readable) { received.append($0) }

        poller.signalReady(fd: 41, events: [.readable, .writable, .hangup])
        loop.runOnce(timeout: .zero)
        poller.signalReady(fd: 41, events: .writable)
        loop.runOnce(timeout: .zero)
        poller.signalReady(fd: 41, events: .error)
        loop.runOnce(timeout: .zero)

        XCTAssertEqual(received, [[.readable, .hangup], .error])
    }

    func testUpdateEventsChangesWhatTheSourceIsCalledFor() throws {
        let (loop, poller) = MainLoop.manual()
        var received: [IOEvents] = []
        let source = try loop.addSource(fd: 42, events: .readable) { received.append($0) }

        try source.updateEvents([.readable, .writable])
        poller.signalReady(fd: 42, events: .writable)
        loop.runOnce(timeout: .zero)

        XCTAssertEqual(poller.registeredEvents(fd: 42), [.readable, .writable])
        XCTAssertEqual(source.events, [.readable, .writable])
        XCTAssertEqual(received, [.writable])
    }

    func testCancelUnregistersTheSource() throws {
        let (loop, poller) = MainLoop.manual()
        var calls = 0
        let source = try loop.addSource(fd: 43, events: .readable) { _ in calls += 1 }

        source.cancel()
        poller.signalReady(fd: 43, events: .readable)
        loop.runOnce(timeout: .zero)

        XCTAssertNil(poller.registeredEvents(fd: 43))
        XCTAssertTrue(source.isCancelled)
        XCTAssertEqual(calls, 0)
    }

    func testSourceCancelledByAnotherSourceInTheSameIterationDoesNotRun() throws {
        let (loop, poller) = MainLoop.manual()
        var calls: [Int32] = []
        var second: SourceHandle?
        try loop.addSource(fd: 44, events: .readable) { _ in
            calls.append(44)
            second?.cancel()
        }
        second = try loop.addSource(fd: 45, events: .readable) { _ in calls.append(45) }

        poller.signalReady(fd: 44, events: .readable)
        poller.signalReady(fd: 45, events: .readable)
        loop.runOnce(timeout: .zero)

        XCTAssertEqual(calls, [44])
    }

    func testSourceCanCancelItselfAndItsFdCanBeWatchedAgain() throws {
        let (loop, poller) = MainLoop.manual()
        var calls: [String] = []
        var source: SourceHandle?
        source = try loop.addSource(fd: 46, events: .readable) { _ in
            calls.append("old")
            source?.cancel()
            // A handler may watch the fd number again at once; the new source starts with the next event.
            _ = try? loop.addSource(fd: 46, events: .readable) { _ in calls.append("new") }
        }

        poller.signalReady(fd: 46, events: .readable)
        loop.runOnce(timeout: .zero)
        XCTAssertEqual(calls, ["old"])

        poller.signalReady(fd: 46, events: .readable)
        loop.runOnce(timeout: .zero)
        XCTAssertEqual(calls, ["old", "new"])
    }

    func testSourceCancellingADueTimerStopsItFiringInThatIteration() throws {
        let (loop, poller) = MainLoop.manual()
        var fired = false
        let timer = loop.addTimer(after: .seconds(1)) { fired = true }
        try loop.addSource(fd: 47, events: .readable) { _ in timer.cancel() }

        poller.advance(by: .seconds(1))
        poller.signalReady(fd: 47, events: .readable)
        loop.runOnce(timeout: .zero)

        XCTAssertFalse(fired)
    }

    func testWatchingAWatchedFdAgainThrowsEEXISTNamingTheFd() throws {
        let (loop, _) = MainLoop.manual()
        try loop.addSource(fd: 48, events: .readable) { _ in }

        XCTAssertThrowsError(try loop.addSource(fd: 48, events: .writable) { _ in }) { error in
            XCTAssertEqual((error as? LoopError)?.errno, EEXIST)
            XCTAssertTrue("\(error)".contains("fd 48: EEXIST"), "\(error)")
        }
    }
}
