import KioskCore
import KioskDisplay
import XCTest

/// When `kioskd run` waits for a display rather than failing at start: only when a connector the options allow
/// exists and none of them is connected.
final class DRMOutputSourceTests: XCTestCase {
    private let mode = OutputMode(width: 1024, height: 768, refreshMilliHz: 60_000, isPreferred: true)

    private func probe(_ connectors: [(String, Bool)], chosen: String? = nil) -> OutputProbe {
        OutputProbe(connectors: connectors.map { ConnectorStatus(device: "/dev/dri/card0", name: $0.0, isConnected: $0.1, preferredMode: mode) },
                    choice: chosen.map { OutputCandidate(device: "/dev/dri/card0", connector: $0, mode: mode) })
    }

    func testWaitsWhenTheConnectorsAllowedAreAllDisconnected() {
        XCTAssertTrue(DRMOutputSource.shouldWait(for: probe([("HDMI-A-1", false), ("DSI-1", false)]), connector: nil))
        XCTAssertTrue(DRMOutputSource.shouldWait(for: probe([("HDMI-A-1", false)]), connector: "hdmi-a-1"))
        XCTAssertTrue(DRMOutputSource.shouldWait(for: probe([("HDMI-A-1", false), ("DSI-1", true)]), connector: "HDMI-A-1"),
                      "the connector asked for is disconnected, another one is not")
    }

    func testABadChoiceOrAConnectedDisplayDoesNotWait() {
        XCTAssertFalse(DRMOutputSource.shouldWait(for: probe([("HDMI-A-1", true)], chosen: "HDMI-A-1"), connector: nil))
        XCTAssertFalse(DRMOutputSource.shouldWait(for: probe([("HDMI-A-1", false)]), connector: "NOPE"), "no such connector: an error at start")
        XCTAssertFalse(DRMOutputSource.shouldWait(for: probe([]), connector: nil), "no card (of the driver asked for): an error at start")
        XCTAssertFalse(DRMOutputSource.shouldWait(for: probe([("HDMI-A-1", true)]), connector: nil),
                       "connected but not usable (a mode it lacks): opening it says why")
    }
}
