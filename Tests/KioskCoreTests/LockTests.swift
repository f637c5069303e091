import Dispatch
import KioskCore
import XCTest

final class LockTests: XCTestCase {
    func testIncrementsFromManyThreadsAreNeverLost() {
        let threads = 16, incrementsPerThread = 10_000
        let counter = Lock(0)
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<incrementsPerThread {
                counter.withLock { $0 += 1 }
            }
        }
        XCTAssertEqual(counter.withLock { $0 }, threads * incrementsPerThread)
    }

    func testWithLockReturnsWhatTheBodyReturns() {
        let list = Lock([1, 2, 3])
        let drained = list.withLock { list in defer { list.removeAll() }; return list }
        XCTAssertEqual(drained, [1, 2, 3])
        XCTAssertEqual(list.withLock { $0 }, [])
    }

    func testThrowingBodyReleasesTheLockAndKeepsItsChanges() {
        struct Refused: Error {}
        let counter = Lock(0)
        XCTAssertThrowsError(try counter.withLock { value in
            value = 7
            throw Refused()
        }) { XCTAssertTrue($0 is Refused) }
        // Had the throw left the lock held, this would stop on EDEADLK (debug builds) or hang.
        XCTAssertEqual(counter.withLock { $0 }, 7)
    }
}
