import Foundation
import KioskCore
import Synchronization
import XCTest

/// The same loop over the real `EpollPoller`: pipes, the timerfd, the eventfd and the signalfd. Timing is
/// checked one way only (never earlier than asked); upper bounds come from a safety timer, never a tight assert.
final class EpollLoopTests: XCTestCase {
    private func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw LoopError(operation: "pipe", object: "", errno: errno) }
        return (fds[0], fds[1])
    }

    private func writeByte(_ fd: Int32) {
        var byte: UInt8 = 42
        XCTAssertEqual(write(fd, &byte, 1), 1)
    }

    // MARK: Sources

    func testPipeSourceIsCalledWhenReadableThenOnHangup() throws {
        let loop = try MainLoop.epoll()
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd) }
        var received: [IOEvents] = []
        let source = try loop.addSource(fd: readEnd, events: .readable) { events in
            received.append(events)
            var byte: UInt8 = 0
            if events.contains(.readable) { _ = read(readEnd, &byte, 1) }
        }

        writeByte(writeEnd)
        loop.runOnce(timeout: .seconds(5))
        XCTAssertEqual(received, [.readable])

        close(writeEnd)
        loop.runOnce(timeout: .seconds(5))
        XCTAssertEqual(received.count, 2)
        XCTAssertTrue(received.last?.contains(.hangup) ?? false, "\(received)")
        XCTAssertEqual(loop.wakeups, 2)
        source.cancel()
    }

    func testWritableSourceIsCalledWithWritable() throws {
        let loop = try MainLoop.epoll()
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd); close(writeEnd) }
        var received: [IOEvents] = []
        let source = try loop.addSource(fd: writeEnd, events: .writable) { received.append($0) }

        loop.runOnce(timeout: .seconds(5))

        XCTAssertEqual(received, [.writable])
        source.cancel()
    }

    func testCancelUnregistersTheFdFromEpoll() throws {
        let loop = try MainLoop.epoll()
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd); close(writeEnd) }
        var oldCalls = 0
        let source = try loop.addSource(fd: readEnd, events: .readable) { _ in oldCalls += 1 }

        source.cancel()
        writeByte(writeEnd)
        loop.runOnce(timeout: .milliseconds(20))
        XCTAssertEqual(oldCalls, 0)
        XCTAssertEqual(loop.wakeups, 0)

        // Adding it again would fail with EEXIST had epoll kept the old registration.
        var newEvents: [IOEvents] = []
        let again = try loop.addSource(fd: readEnd, events: .readable) { newEvents.append($0) }
        loop.runOnce(timeout: .seconds(5))
        XCTAssertEqual(newEvents, [.readable], "the byte written while unwatched is still there")
        again.cancel()
    }

    func testAddSourceErrorsNameTheFdAndTheErrno() throws {
        let loop = try MainLoop.epoll()
        // Descriptors are numbered below the open-file limit, so this one is never open; a number just closed
        // could be reused at once by another thread of the test process.
        var limit = rlimit()
        XCTAssertEqual(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit), 0)
        let neverOpen = Int32(clamping: limit.rlim_cur)

        XCTAssertThrowsError(try loop.addSource(fd: neverOpen, events: .readable) { _ in }) { error in
            XCTAssertEqual((error as? LoopError)?.errno, EBADF)
            XCTAssertTrue("\(error)".hasPrefix("epoll_ctl(ADD) fd \(neverOpen): EBADF"), "\(error)")
        }

        // Regular files are always ready, so epoll refuses them.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-loop-\(getpid())").path
        let file = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(file, 0)
        defer { close(file); unlink(path) }
        XCTAssertThrowsError(try loop.addSource(fd: file, events: .readable) { _ in }) { error in
            XCTAssertEqual((error as? LoopError)?.errno, EPERM, "\(error)")
        }

        let (otherRead, otherWrite) = try makePipe()
        defer { close(otherRead); close(otherWrite) }
        let source = try loop.addSource(fd: otherRead, events: .readable) { _ in }
        XCTAssertThrowsError(try loop.addSource(fd: otherRead, events: .readable) { _ in }) { error in
            XCTAssertEqual((error as? LoopError)?.errno, EEXIST, "\(error)")
        }
        source.cancel()
    }

    // MARK: Timers

    func testTimerFiresNoEarlierThanItsDeadlineAndTheWaitDoesNotReturnBefore() throws {
        let loop = try MainLoop.epoll()
        let deadline = loop.now + .milliseconds(20)
        var firedAt: MonotonicInstant?
        loop.addTimer(at: deadline) { firedAt = loop.now }

        loop.runOnce(timeout: nil)

        let fired = try XCTUnwrap(firedAt, "runOnce(timeout: nil) returned before the timer fired")
        XCTAssertGreaterThanOrEqual(fired, deadline)
        XCTAssertGreaterThanOrEqual(loop.now, deadline)
        XCTAssertEqual(loop.iterations, 1)
        XCTAssertEqual(loop.wakeups, 1)
    }

    func testRepeatingTimerOnAnIdleLoopWakesItOnlyToFire() throws {
        let loop = try MainLoop.epoll()
        let start = loop.now
        var firedAt: [MonotonicInstant] = []
        let timer = loop.addTimer(after: .milliseconds(15), repeating: .milliseconds(15)) {
            firedAt.append(loop.now)
            if firedAt.count == 3 { loop.stop() }
        }

        loop.run()
        timer.cancel()

        XCTAssertEqual(firedAt.count, 3)
        for (index, instant) in firedAt.enumerated() {
            XCTAssertGreaterThanOrEqual(instant, start + .milliseconds(15 * (index + 1)))
        }
        // Every iteration of run() slept until a firing: none woke early or for nothing.
        XCTAssertEqual(loop.iterations, loop.wakeups)
        XCTAssertLessThanOrEqual(loop.iterations, 3)
    }

    func testTimeoutWithNothingToDoReturnsAfterItAndIsNoWakeup() throws {
        let loop = try MainLoop.epoll()
        let start = loop.now

        loop.runOnce(timeout: .milliseconds(30))

        XCTAssertGreaterThanOrEqual(loop.now, start + .milliseconds(30))
        XCTAssertEqual(loop.iterations, 1)
        XCTAssertEqual(loop.wakeups, 0)
    }

    func testCancelledTimerNeitherFiresNorEndsALaterWait() throws {
        let loop = try MainLoop.epoll()
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd); close(writeEnd) }
        var fired = false
        let timer = loop.addTimer(after: .milliseconds(50)) { fired = true }
        // The first wait arms the timerfd for the timer and returns at once for the pipe, whose handler cancels it.
        let source = try loop.addSource(fd: readEnd, events: .readable) { _ in
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            timer.cancel()
        }
        writeByte(writeEnd)
        loop.runOnce(timeout: nil)
        XCTAssertEqual(loop.wakeups, 1)
        let start = loop.now

        loop.runOnce(timeout: .milliseconds(100))

        XCTAssertFalse(fired)
        XCTAssertEqual(loop.wakeups, 1)
        XCTAssertGreaterThanOrEqual(loop.now, start + .milliseconds(100), "the timerfd was re-armed, not left at 50 ms")
        source.cancel()
    }

    // MARK: Wakers

    func testWakeFromAnotherThreadUnblocksRunOnceWithoutATimeout() throws {
        let loop = try MainLoop.epoll()
        var woken = 0
        let waker = try loop.makeWaker { woken += 1 }
        var safetyFired = false
        let safety = loop.addTimer(after: .seconds(10)) { safetyFired = true }

        let thread = Thread {
            // Paces the wake, not a wait: the loop is asleep in epoll_wait by the time it comes.
            usleep(50_000)
            waker.wake()
        }
        thread.start()
        loop.runOnce(timeout: nil)
        safety.cancel()

        XCTAssertEqual(woken, 1)
        XCTAssertFalse(safetyFired, "the wait ended by the safety timer, not by the wake")
        XCTAssertEqual(loop.wakeups, 1)
    }

    func testWakesFromManyThreadsCoalesceIntoOneHandlerCall() throws {
        let loop = try MainLoop.epoll()
        var woken = 0
        let waker = try loop.makeWaker { woken += 1 }

        DispatchQueue.concurrentPerform(iterations: 1000) { _ in waker.wake() }
        loop.runOnce(timeout: .seconds(5))
        XCTAssertEqual(woken, 1)

        loop.runOnce(timeout: .zero)
        XCTAssertEqual(woken, 1)
        XCTAssertEqual(loop.wakeups, 1, "the eventfd was drained: nothing left to wake the next iteration")
    }

    func testNoWakeIsLostWhileTheLoopRacesAWorker() throws {
        let loop = try MainLoop.epoll()
        let produced = ProducedCount()
        let itemCount = 2000
        var seen: [Int] = []
        let waker = try loop.makeWaker { seen.append(produced.value) }

        Thread {
            for item in 1...itemCount {
                produced.increment()
                waker.wake()
                if item % 100 == 0 { usleep(100) }  // paces the producer, so the loop races it from both sides
            }
        }.start()
        // A lost wake would leave the last items unseen with nothing to wake the loop: the wait would run to its
        // timeout, an iteration that is not a wakeup.
        while seen.last != itemCount && loop.iterations == loop.wakeups {
            loop.runOnce(timeout: .seconds(5))
        }

        XCTAssertEqual(seen.last, itemCount)
        XCTAssertEqual(loop.iterations, loop.wakeups)
        XCTAssertEqual(seen, seen.sorted(), "each handler run sees at least what the previous one saw")
    }

    func testStopFromAnotherThreadThroughAWaker() throws {
        let loop = try MainLoop.epoll()
        let stopper = try loop.makeWaker { [unowned loop] in loop.stop() }
        var exits = 0
        loop.addObserver(order: 0, activities: .exit) { _ in exits += 1 }
        var safetyFired = false
        let safety = loop.addTimer(after: .seconds(10)) { [unowned loop] in
            safetyFired = true
            loop.stop()
        }

        Thread {
            // Paces the wake, not a wait: the loop is running by the time it comes.
            usleep(20_000)
            stopper.wake()
        }.start()
        loop.run()
        safety.cancel()

        XCTAssertFalse(safetyFired)
        XCTAssertEqual(exits, 1)
    }

    func testStopFromAnObserverDoesNotBlockInTheWait() throws {
        let loop = try MainLoop.epoll()
        var safetyFired = false
        let safety = loop.addTimer(after: .seconds(10)) { [unowned loop] in
            safetyFired = true
            loop.stop()
        }
        loop.addObserver(order: 0, activities: .beforeWaiting) { [unowned loop] _ in loop.stop() }

        loop.run()
        safety.cancel()

        XCTAssertFalse(safetyFired)
        XCTAssertEqual(loop.iterations, 1)
    }

    // MARK: Signals

    func testSignalArrivesThroughTheSignalfd() throws {
        let loop = try MainLoop.epoll()
        var received: [Int32] = []
        try loop.onSignals([SIGHUP]) { received.append($0) }
        defer {
            // Nothing is pending any more, so unblocking cannot run SIGHUP's default action.
            var mask = sigset_t()
            sigemptyset(&mask)
            sigaddset(&mask, SIGHUP)
            pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        }

        // onSignals blocked SIGHUP in this thread only, and the test process has other threads that do not
        // block it: kill(getpid(), SIGHUP) could be delivered to one of them and end the process. Directed at
        // this thread, the signal stays pending here, where the signalfd reads it.
        XCTAssertEqual(pthread_kill(pthread_self(), SIGHUP), 0)
        loop.runOnce(timeout: .seconds(5))

        XCTAssertEqual(received, [SIGHUP])
        XCTAssertEqual(loop.wakeups, 1)
    }

    func testSignalsThatCannotBeCaughtAreRejected() throws {
        let loop = try MainLoop.epoll()
        XCTAssertThrowsError(try loop.onSignals([SIGSTOP]) { _ in }) { error in
            XCTAssertEqual((error as? LoopError)?.errno, EINVAL)
        }
    }
}

/// What a worker thread has produced, read by the loop thread. An atomic rather than a `Mutex`: this
/// toolchain's `Synchronization.Mutex` on Linux locks in code the thread sanitizer cannot see into, so it
/// reports races between correctly locked accesses.
private final class ProducedCount: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .acquiring) }

    func increment() {
        count.add(1, ordering: .releasing)
    }
}
