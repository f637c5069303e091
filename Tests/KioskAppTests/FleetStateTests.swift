import Foundation
@testable import KioskApp
import KioskCore
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// What a kiosk in process tells its fleet over a real Mosquitto broker on loopback: `<prefix>/state` (each output's
/// figures, a health change), the scene's MQTT data sources, and thumbnails of the screen. `KioskdTests.FleetMQTTTests`
/// keeps what only the process shows: `online`/`offline` as it starts and stops, the last will of a killed kioskd, a
/// broker restart, TLS, and an invalid `mqtt:` section stopping kioskd.
final class FleetStateTests: FleetTestCase {
    func testTheStateDocumentGivesTheOutputHealthAndCache() throws {
        let kiosk = try start()
        let state = try kiosk.subscribe(["\(prefix)/state"]).waitForJSON(on: "\(prefix)/state")[0]
        XCTAssertEqual(state["version"] as? String, "0.1.0")
        XCTAssertEqual(state["page"] as? String, "main")
        XCTAssertEqual(state["power"] as? String, "on")
        XCTAssertEqual(state["mode"] as? String, "320x240@60")
        let outputs = try XCTUnwrap(state["outputs"] as? [[String: Any]], "\(state)")
        XCTAssertEqual(outputs.count, 1)
        XCTAssertEqual(outputs.first?["connector"] as? String, "Headless-1")
        XCTAssertEqual(outputs.first?["mode"] as? String, "320x240@60")
        XCTAssertEqual(outputs.first?["modes"] as? [String], ["320x240@60"])
        XCTAssertEqual(outputs.first?["power"] as? String, "on")
        XCTAssertNotNil(state["missed_vblanks"] as? Int)
        XCTAssertNotNil(state["fps"] as? Double ?? (state["fps"] as? Int).map(Double.init))
        XCTAssertNotNil(state["uptime_s"] as? Int)
        // The harness's flag file, absent: the kiosk's clock is not known to be synchronized.
        XCTAssertEqual(state["clock_synchronized"] as? Bool, false, "\(state)")
        let health = try XCTUnwrap(state["health"] as? [String: Any], "\(state)")
        XCTAssertEqual(health["healthy"] as? Bool, true, "\(state)")
        XCTAssertEqual(health["reason"] as? String, "ok", "\(state)")
        XCTAssertTrue((state["scene"] as? String)?.hasSuffix("scene.yaml") == true, "\(state)")
        // The asset cache, as `stats` gives it: not opened, since the scene names no URL.
        let cache = try XCTUnwrap(state["cache"] as? [String: Any], "\(state)")
        XCTAssertEqual(cache["open"] as? Bool, false, "\(cache)")
        XCTAssertEqual(cache["max_bytes"] as? Int, 1024 << 20, "\(cache)")
    }

    /// With an `outputs:` section the state lists each output under its connector, with its own mode, page, power
    /// and figures; the top level is the first output's.
    func testTheStateListsEachOutputWithItsOwnFigures() throws {
        let kiosk = try start("events: [scene]", configTail: "outputs:\n  - {connector: HDMI-A-1, mode: 320x240@60}\n  - {connector: DP-1, mode: 200x100@50}\n",
                              mode: nil)
        let states = try kiosk.subscribe(["\(prefix)/state"])
        _ = try states.waitForJSON(on: "\(prefix)/state") { ($0["outputs"] as? [[String: Any]])?.count == 2 }
        // Each output's first frames, so that the state the page change publishes has them to show.
        try kiosk.waitUntil("both outputs to flip") {
            let byOutput = try kiosk.result("stats")["by_output"] as? [String: [String: Any]] ?? [:]
            return ["HDMI-A-1", "DP-1"].allSatisfy { (byOutput[$0]?["frames_flipped"] as? Int ?? 0) > 0 }
        }
        _ = try kiosk.result("page.show", #"{"name": "second", "output": "dp-1", "transition": {"kind": "cut"}}"#)
        let state = try states.waitForJSON(on: "\(prefix)/state") { state in
            (state["outputs"] as? [[String: Any]])?.last?["page"] as? String == "second"
        }[0]
        XCTAssertEqual(state["mode"] as? String, "320x240@60", "the top level is the first output's: \(state)")
        XCTAssertEqual(state["page"] as? String, "main", "\(state)")
        let outputs = try XCTUnwrap(state["outputs"] as? [[String: Any]], "\(state)")
        XCTAssertEqual(outputs.map { $0["connector"] as? String }, ["HDMI-A-1", "DP-1"])
        XCTAssertEqual(outputs.map { $0["mode"] as? String }, ["320x240@60", "200x100@50"])
        XCTAssertEqual(outputs.map { $0["page"] as? String }, ["main", "second"])
        XCTAssertEqual(outputs.map { $0["power"] as? String }, ["on", "on"])
        for output in outputs {
            XCTAssertGreaterThan(output["frames_flipped"] as? Int ?? 0, 0, "\(output)")
            XCTAssertEqual((output["health"] as? [String: Any])?["reason"] as? String, "ok", "\(output)")
        }
        // Scene events name the output they come from.
        let events = try kiosk.subscribe(["\(prefix)/event/scene"])
        _ = try kiosk.result("page.show", #"{"name": "main", "output": "DP-1", "transition": {"kind": "cut"}}"#)
        let shown = try events.waitForJSON(on: "\(prefix)/event/scene") { ($0["data"] as? [String: Any])?["kind"] as? String == "page_shown" }[0]
        XCTAssertEqual((shown["data"] as? [String: Any])?["output"] as? String, "DP-1", "\(shown)")
    }

    /// The health signal is part of the state: handing the display over (SIGUSR1) and taking it back (SIGUSR2)
    /// changes its reason, and each change is published without waiting for the 60 s refresh. The signals are sent
    /// to the test thread, which blocks them (the kiosk's `SignalRouting`) and reads them from the loop's signalfd.
    func testAHealthChangeIsPublishedInTheState() throws {
        let kiosk = try start()
        let states = try kiosk.subscribe(["\(prefix)/state"])
        func reason(_ state: [String: Any]) -> String? { (state["health"] as? [String: Any])?["reason"] as? String }
        _ = try states.waitForJSON(on: "\(prefix)/state") { reason($0) == "ok" }
        XCTAssertEqual(pthread_kill(pthread_self(), SIGUSR1), 0)
        let handedOver = try states.waitForJSON(on: "\(prefix)/state", timeout: 10) { reason($0) == "waiting for DRM master" }[0]
        XCTAssertEqual((handedOver["health"] as? [String: Any])?["healthy"] as? Bool, true, "waiting for master is healthy: \(handedOver)")
        XCTAssertEqual(pthread_kill(pthread_self(), SIGUSR2), 0)
        _ = try states.waitForJSON(on: "\(prefix)/state", timeout: 10) { reason($0) == "ok" }
    }

    func testADataSourceTakesTheRetainedValueAtStartThenEachUpdate() throws {
        try broker.publish("home/livingroom/temperature", #"{"value": 21.5, "unit": "C"}"#, retain: true)
        let kiosk = try start()
        try kiosk.waitUntil("the retained temperature to arrive") { try kiosk.data("temperature") == "21.5" }
        func screenshot() throws -> Data {
            try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(try kiosk.result("screenshot")["png_base64"] as? String)))
        }
        let shown = try screenshot()
        try broker.publish("home/livingroom/temperature", #"{"value": 23}"#)
        try broker.publish("home/label", "kitchen")
        try kiosk.waitUntil("the new temperature and label") {
            try kiosk.result("data.get")["values"] as? [String: String] == ["temperature": "23", "label": "kitchen"]
        }
        try kiosk.waitUntil("the screen to show the new value") { try screenshot() != shown }
        // Payloads that give no value leave the key as it is.
        try broker.publish("home/livingroom/temperature", "not json")
        try broker.publish("home/livingroom/temperature", #"{"other": 1}"#)
        try broker.publish("home/label", "dining")
        try kiosk.waitUntil("the label after the bad payloads") { try kiosk.data("label") == "dining" }
        XCTAssertEqual(try kiosk.data("temperature"), "23")
    }

    /// With `thumbnail_every`, a JPEG of the screen at `thumbnail_width`, retained on `<prefix>/thumbnail`: one at
    /// the connection, then one each period that shows what the screen shows then.
    func testThumbnailsShowTheScreenEachPeriod() throws {
        let kiosk = try start("thumbnail_every: 5\nthumbnail_width: 64\n")
        let first = try kiosk.firstMessage(on: "\(prefix)/thumbnail")
        XCTAssertEqual(Array(first.prefix(2)), [0xFF, 0xD8], "a JPEG")
        let shown = try readJPEG(Array(first))
        XCTAssertEqual(shown.width, 64)
        XCTAssertEqual(shown.height, 48, "320x240 at 64 pixels wide")
        _ = try kiosk.result("page.show", #"{"name": "second", "transition": {"kind": "cut"}}"#)
        // The second page is #203040 all over: the next period's thumbnail shows it (a retained message: the latest).
        var centre: [Int] = []
        var checked = Date.distantPast
        try kiosk.waitUntil("a thumbnail of the second page", timeout: 30) {
            // Once a second: each look starts a subscriber process.
            guard Date().timeIntervalSince(checked) >= 1 else { return false }
            checked = Date()
            let jpeg = try readJPEG(Array(try kiosk.firstMessage(on: "\(prefix)/thumbnail")))
            let word = jpeg.pixels[24 * jpeg.width + 32]
            centre = [Int((word >> 16) & 0xFF), Int((word >> 8) & 0xFF), Int(word & 0xFF)]
            return zip(centre, [0x20, 0x30, 0x40]).allSatisfy { abs($0 - $1) <= 8 }
        }
        XCTAssertEqual(try kiosk.result("ping")["pong"] as? Bool, true, "the kiosk still answers")
    }
}
