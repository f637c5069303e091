import KioskCore
import XCTest

final class ListenersTests: XCTestCase {
    func testEveryListenerHearsEveryEventInTheOrderAdded() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        let tokens = [
            listeners.add { heard.append("first \($0)") },
            listeners.add { heard.append("second \($0)") },
            listeners.add { heard.append("third \($0)") },
        ]

        listeners.emit(1)
        listeners.emit(2)

        XCTAssertEqual(heard, ["first 1", "second 1", "third 1", "first 2", "second 2", "third 2"])
        XCTAssertEqual(listeners.count, 3)
        withExtendedLifetime(tokens) {}
    }

    func testACancelledListenerHearsNothingMoreAndTheOthersStillDo() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        let kept = listeners.add { heard.append("kept \($0)") }
        let cancelled = listeners.add { heard.append("cancelled \($0)") }

        listeners.emit(1)
        cancelled.cancel()
        cancelled.cancel()
        listeners.emit(2)

        XCTAssertEqual(heard, ["kept 1", "cancelled 1", "kept 2"])
        XCTAssertTrue(cancelled.isCancelled)
        XCTAssertFalse(kept.isCancelled)
        XCTAssertEqual(listeners.count, 1)
    }

    func testFreeingTheTokenRemovesTheListener() {
        let listeners = Listeners<Void>()
        var heard = 0
        var token: ListenerToken? = listeners.add { _ in heard += 1 }

        listeners.emit()
        XCTAssertNotNil(token)
        token = nil
        listeners.emit()

        XCTAssertEqual(heard, 1)
        XCTAssertTrue(listeners.isEmpty)
    }

    func testAnOwnerThatKeepsItsTokenStopsListeningWhenFreed() {
        final class Owner {
            var heard: [Int] = []
            var token: ListenerToken?
            init(_ listeners: Listeners<Int>) { token = listeners.add { [unowned self] in heard.append($0) } }
        }
        let listeners = Listeners<Int>()
        var owner: Owner? = Owner(listeners)
        weak let freed = owner

        listeners.emit(1)
        XCTAssertEqual(owner?.heard, [1])
        owner = nil
        // An unowned capture of a freed owner would trap here if its listener were still called.
        listeners.emit(2)

        XCTAssertNil(freed)
        XCTAssertTrue(listeners.isEmpty)
    }

    func testAListenerAddedDuringAnEmissionHearsFromTheNextOne() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        var added: [ListenerToken] = []
        let adder = listeners.add { event in
            heard.append("adder \(event)")
            if event == 1 { added.append(listeners.add { heard.append("added \($0)") }) }
        }
        let last = listeners.add { heard.append("last \($0)") }

        listeners.emit(1)
        XCTAssertEqual(heard, ["adder 1", "last 1"], "the listener added during the emission did not hear it")
        listeners.emit(2)

        XCTAssertEqual(heard, ["adder 1", "last 1", "adder 2", "last 2", "added 2"])
        withExtendedLifetime((adder, last, added)) {}
    }

    func testAListenerRemovedDuringAnEmissionIsNotCalledLaterInIt() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        var later: ListenerToken?
        let remover = listeners.add { event in
            heard.append("remover \(event)")
            later?.cancel()
        }
        later = listeners.add { heard.append("later \($0)") }

        listeners.emit(1)
        listeners.emit(2)

        XCTAssertEqual(heard, ["remover 1", "remover 2"])
        XCTAssertEqual(listeners.count, 1)
        withExtendedLifetime(remover) {}
    }

    func testAListenerMayCancelItselfAndTheOthersStillHearThatEmission() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        var once: ListenerToken?
        once = listeners.add { event in
            heard.append("once \(event)")
            once?.cancel()
            once = nil
        }
        let always = listeners.add { heard.append("always \($0)") }

        listeners.emit(1)
        listeners.emit(2)

        XCTAssertEqual(heard, ["once 1", "always 1", "always 2"])
        XCTAssertNil(once)
        withExtendedLifetime(always) {}
    }

    func testANestedEmissionReachesEveryListenerBeforeTheOuterOneGoesOn() {
        let listeners = Listeners<Int>()
        var heard: [String] = []
        let first = listeners.add { event in
            heard.append("first \(event)")
            if event == 1 { listeners.emit(2) }
        }
        let second = listeners.add { heard.append("second \($0)") }

        listeners.emit(1)

        XCTAssertEqual(heard, ["first 1", "first 2", "second 2", "second 1"])
        withExtendedLifetime((first, second)) {}
    }

    func testATokenOutlivingItsListsCancelsHarmlesslyAndTheListIsFreedWithItsListeners() {
        final class Captured {}
        var listeners: Listeners<Int>? = Listeners<Int>()
        var captured: Captured? = Captured()
        weak let freedCapture = captured
        let token = listeners!.add { [captured] _ in withExtendedLifetime(captured) {} }
        captured = nil
        XCTAssertNotNil(freedCapture, "the list holds its listener")

        listeners = nil

        XCTAssertNil(freedCapture, "the listener went with the list, though its token lives on")
        XCTAssertFalse(token.isCancelled)
        token.cancel()
        XCTAssertTrue(token.isCancelled)
    }
}
