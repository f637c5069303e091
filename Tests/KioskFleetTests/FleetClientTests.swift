import Foundation
import KioskControl
import KioskCore
import KioskFleet
import KioskScene
import KioskTestSupport
import XCTest

/// A `FleetClient` in this process on a real epoll loop and a real broker: an unchanged state is published again
/// each interval, and a pressed `emit` action goes out on `<prefix>/action`.
final class FleetClientTests: XCTestCase {
    func testAnUnchangedStateIsRepublishedEachIntervalAndActionsArePublished() throws {
        let broker = try MosquittoBroker()
        let messages = try broker.subscribe(["kioskd/unit/state", "kioskd/unit/action"])
        var settings = MQTTSettings(host: "127.0.0.1", port: broker.port)
        settings.topicPrefix = "kioskd/unit"
        settings.clientID = "unit"
        settings.allow = []
        let configured = settings
        let stopper = Lock<Waker?>(nil)
        let failure = Lock<String?>(nil)
        let thread = Thread {
            do {
                let loop = try MainLoop.epoll()
                let fleet = try FleetClient(settings: configured, registry: CommandRegistry(), loop: loop, stateInterval: .seconds(1))
                fleet.state = { ["version": "test", "page": "main"] }
                var announced = false
                let poll = loop.addTimer(after: .milliseconds(20), repeating: .milliseconds(20)) {
                    guard !announced, fleet.connection.isConnected else { return }
                    announced = true
                    fleet.actionEmitted("doorbell")
                }
                let waker = try loop.makeWaker { loop.stop() }
                stopper.withLock { $0 = waker }
                fleet.start()
                loop.run()
                poll.cancel()
                fleet.stop()
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        thread.start()
        defer {
            stopper.withLock { $0?.wake() }
        }
        XCTAssertEqual(try messages.waitFor(on: "kioskd/unit/action"), ["doorbell"])
        // The first state at connect, then the same state again at least once per interval (checked every 2 s).
        let started = Date()
        let states = try messages.waitFor(3, on: "kioskd/unit/state", timeout: 20)
        XCTAssertEqual(Set(states).count, 1, "nothing changed: \(states)")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 1.5, "republished on the interval, not all at once")
        XCTAssertNil(failure.withLock { $0 })
    }
}
