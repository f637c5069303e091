import Foundation
import KioskTestSupport
import XCTest

/// Proof of play delivered over MQTT to a real Mosquitto on loopback: every record on `<prefix>/plays` at QoS 1
/// with its sequence number, none missing, in order; with the broker down for half of them, all of them once it is
/// back, in order, and marked delivered in the store only then.
final class PlayDeliveryTests: XCTestCase {
    private var broker: MosquittoBroker!
    private var daemon: ControlledKioskd?
    private let prefix = "kioskd/plays-test"

    override func setUpWithError() throws {
        broker = try MosquittoBroker()
    }

    override func tearDownWithError() throws {
        _ = daemon?.stop()
        daemon = nil
        broker = nil
    }

    private func startKiosk(_ name: String) throws -> ControlledKioskd {
        let dir = try KioskdProcess.scratchDirectory(name)
        let scene = dir.appendingPathComponent("scene.yaml")
        try Data("""
            pages:
              - {name: a, widgets: [{type: rect, background: "#ff0000"}]}
              - {name: b, widgets: [{type: rect, background: "#00ff00"}]}
            """.utf8).write(to: scene)
        let config = dir.appendingPathComponent("kioskd.yaml").path
        try broker.writeKioskdConfig("topic_prefix: \(prefix)\nclient_id: plays-kiosk", to: config)
        let started = try ControlledKioskd(["run", "--backend", "headless", "--mode", "64x48@60", "--scene", scene.path,
                                            "--config", config, "--plays-db", dir.appendingPathComponent("plays.db").path])
        daemon = started
        return started
    }

    /// `count` page changes, a and b in turn; each ends the record before it.
    private func changePages(_ daemon: ControlledKioskd, _ count: Int, startingWith first: Int) throws {
        for i in first..<(first + count) {
            _ = try daemon.result("page.show", #"{"name": "\#(i % 2 == 0 ? "b" : "a")"}"#)
        }
    }

    /// The first `count` records by sequence number, each taken at its first arrival (a record whose PUBACK was lost
    /// may come twice): the sequence numbers in the order they first came.
    private func sequences(_ subscription: MQTTSubscription, _ count: Int, timeout: Double = 60) throws -> [Int] {
        var seen = Set<Int>()
        let records = try subscription.waitForJSON(count, on: "\(prefix)/plays", timeout: timeout) { record in
            guard let sequence = record["sequence"] as? Int else { return false }
            return seen.insert(sequence).inserted
        }
        return records.compactMap { $0["sequence"] as? Int }
    }

    func testTwoHundredPageChangesAreDeliveredWithoutAGap() throws {
        let subscription = try broker.subscribe(["\(prefix)/plays"])
        let daemon = try startKiosk("plays-deliver")
        try changePages(daemon, 200, startingWith: 0)
        // The first page's record and 199 changes have ended: 200 records.
        let got = try sequences(subscription, 200)
        XCTAssertEqual(got, Array(1...200), "every record, in order, no gap")
        try Poll.until("the store to mark them delivered", timeout: 20) {
            let plays = (try? daemon.result("plays", #"{"limit": 300}"#)["plays"] as? [[String: Any]]) ?? []
            return plays.prefix(200).allSatisfy { $0["delivered"] as? Bool == true }
        }
        let plays = try XCTUnwrap(try daemon.result("plays", #"{"limit": 300}"#)["plays"] as? [[String: Any]])
        XCTAssertEqual(plays.last?["delivered"] as? Bool, false, "the page on screen is not sent until it ends")
    }

    func testBrokerDownForHalfDeliversAllAfterInOrder() throws {
        var subscription = try broker.subscribe(["\(prefix)/plays"])
        let daemon = try startKiosk("plays-offline")
        try changePages(daemon, 100, startingWith: 0)
        XCTAssertEqual(try sequences(subscription, 100), Array(1...100))
        broker.stop()
        try changePages(daemon, 100, startingWith: 100)
        let waiting = try XCTUnwrap(try daemon.result("plays", #"{"since": 0, "limit": 300}"#)["plays"] as? [[String: Any]])
        XCTAssertEqual(waiting.filter { $0["delivered"] as? Bool == false }.count, 101, "100 ended while offline, and the one on screen")
        try broker.start()
        subscription = try broker.subscribe(["\(prefix)/plays"])
        XCTAssertEqual(try sequences(subscription, 100), Array(101...200), "all of them once the broker is back, in order")
        try Poll.until("the store to mark them delivered", timeout: 20) {
            let plays = (try? daemon.result("plays", #"{"limit": 300}"#)["plays"] as? [[String: Any]]) ?? []
            return plays.filter { $0["delivered"] as? Bool == false }.count == 1
        }
    }
}
