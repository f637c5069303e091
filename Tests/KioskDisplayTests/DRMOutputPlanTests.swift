import CDRM
import KioskCore
@testable import KioskDisplay
import XCTest

/// Connector, mode, CRTC and plane selection against fabricated resources: the rules without a kernel.
final class DRMOutputPlanTests: XCTestCase {
    private func mode(_ w: Int, _ h: Int, hz: Int, preferred: Bool = false) -> DRMResources.Mode {
        var raw = drmModeModeInfo()
        raw.hdisplay = UInt16(w); raw.vdisplay = UInt16(h)
        raw.htotal = UInt16(w + 100); raw.vtotal = UInt16(h + 50)
        raw.clock = UInt32((w + 100) * (h + 50) * hz / 1000)
        raw.vrefresh = UInt32(hz)
        if preferred { raw.type = UInt32(DRM_MODE_TYPE_PREFERRED) }
        return DRMResources.makeMode(raw)
    }

    /// Two CRTCs; HDMI-A-1 disconnected, DSI-1 connected and reachable only from CRTC index 1; a writeback
    /// connector; primary planes for each CRTC, the second without XRGB8888 unless `secondPlaneXRGB`.
    private func resources(secondPlaneXRGB: Bool = true) -> DRMResources {
        let crtcs = [DRMResources.CRTC(id: 40, index: 0, bufferID: nil, x: 0, y: 0, mode: nil, properties: .init()),
                     DRMResources.CRTC(id: 41, index: 1, bufferID: nil, x: 0, y: 0, mode: nil, properties: .init())]
        let encoders = [DRMResources.Encoder(id: 30, crtcID: nil, possibleCRTCs: 0b01),
                        DRMResources.Encoder(id: 31, crtcID: nil, possibleCRTCs: 0b10)]
        let connectors = [
            DRMResources.Connector(id: 20, name: "HDMI-A-1", type: UInt32(DRM_MODE_CONNECTOR_HDMIA), status: .disconnected,
                                   modes: [], encoderIDs: [30], currentEncoderID: nil, properties: .init()),
            DRMResources.Connector(id: 21, name: "DSI-1", type: UInt32(DRM_MODE_CONNECTOR_DSI), status: .connected,
                                   modes: [mode(800, 480, hz: 60), mode(1280, 720, hz: 50), mode(1280, 720, hz: 60, preferred: true),
                                           mode(1280, 720, hz: 30)],
                                   encoderIDs: [31], currentEncoderID: nil, properties: .init()),
            DRMResources.Connector(id: 22, name: "Writeback-1", type: UInt32(DRM_MODE_CONNECTOR_WRITEBACK), status: .unknown,
                                   modes: [], encoderIDs: [30], currentEncoderID: nil, properties: .init()),
        ]
        let planes = [
            DRMResources.Plane(id: 50, type: .primary, possibleCRTCs: 0b01, formats: [drmFormatXRGB8888], crtcID: nil, bufferID: nil, properties: .init()),
            DRMResources.Plane(id: 51, type: .cursor, possibleCRTCs: 0b10, formats: [drmFormatXRGB8888], crtcID: nil, bufferID: nil, properties: .init()),
            DRMResources.Plane(id: 52, type: .primary, possibleCRTCs: 0b10,
                               formats: secondPlaneXRGB ? [drmFormatXRGB8888] : [0x36314752], crtcID: nil, bufferID: nil, properties: .init()),
        ]
        return DRMResources(connectors: connectors, encoders: encoders, crtcs: crtcs, planes: planes)
    }

    func testFirstConnectedConnectorPreferredModeAndReachableCRTC() throws {
        let plan = try DRMOutputPlan.choose(in: resources(), device: "/dev/dri/card1", connector: nil, mode: nil)
        XCTAssertEqual(plan.connector.name, "DSI-1")
        XCTAssertEqual(plan.mode.mode.description, "1280x720@60")
        XCTAssertEqual(plan.crtc.id, 41)
        XCTAssertEqual(plan.primaryPlane.id, 52, "the primary plane of the chosen CRTC, never the cursor plane")
    }

    func testModeRequestWithoutRateTakesPreferredThenHighest() throws {
        let res = resources()
        XCTAssertEqual(try DRMOutputPlan.choose(in: res, device: "d", connector: "dsi-1", mode: ModeRequest(parsing: "1280x720")).mode.mode.refreshHz, 60)
        XCTAssertEqual(try DRMOutputPlan.choose(in: res, device: "d", connector: nil, mode: ModeRequest(parsing: "1280x720@50")).mode.mode.refreshHz, 50)
        XCTAssertEqual(try DRMOutputPlan.choose(in: res, device: "d", connector: nil, mode: ModeRequest(parsing: "800x480")).mode.mode.size, Size(width: 800, height: 480))
    }

    func testErrorsNameTheProblemAndTheChoices() {
        func message(_ connector: String?, _ mode: String?, res: DRMResources? = nil) -> String {
            do {
                _ = try DRMOutputPlan.choose(in: res ?? resources(), device: "/dev/dri/card1", connector: connector,
                                             mode: mode.flatMap(ModeRequest.init(parsing:)))
                return "no error"
            } catch { return "\(error)" }
        }
        XCTAssertEqual(message("NOPE", nil), "connector NOPE not found on /dev/dri/card1; connectors: HDMI-A-1 (disconnected), DSI-1 (connected)")
        XCTAssertEqual(message("HDMI-A-1", nil), "connector HDMI-A-1 on /dev/dri/card1 is disconnected; connectors: HDMI-A-1 (disconnected), DSI-1 (connected)")
        XCTAssertEqual(message(nil, "123x45"), "mode 123x45 not offered by connector DSI-1; modes: 800x480@60.00, 1280x720@50.00, 1280x720@60.00, 1280x720@30.00")
        XCTAssertEqual(message(nil, "1280x720@75"), "mode 1280x720@75 not offered by connector DSI-1; modes: 800x480@60.00, 1280x720@50.00, 1280x720@60.00, 1280x720@30.00")
        XCTAssertEqual(message(nil, nil, res: resources(secondPlaneXRGB: false)), "connector DSI-1: no primary plane supporting XR24 on CRTCs 41")
    }

    func testModeRequestParsing() {
        XCTAssertEqual(ModeRequest(parsing: "1920x1080@60"), ModeRequest(width: 1920, height: 1080, refreshHz: 60))
        XCTAssertEqual(ModeRequest(parsing: "1024X768"), ModeRequest(width: 1024, height: 768))
        for bad in ["", "1024", "x768", "1024x", "0x0", "1024x768@", "1024x768@0", "axb", "1024x768@60@1", "-1x5"] {
            XCTAssertNil(ModeRequest(parsing: bad), bad)
        }
    }

    func testRefreshIsDerivedFromTimings() {
        var raw = drmModeModeInfo()
        // CEA 1080p59.94: 148352 kHz over 2200 x 1125.
        raw.hdisplay = 1920; raw.vdisplay = 1080; raw.htotal = 2200; raw.vtotal = 1125; raw.clock = 148_352; raw.vrefresh = 60
        XCTAssertEqual(DRMResources.makeMode(raw).mode.refreshMilliHz, 59_940)
    }
}
