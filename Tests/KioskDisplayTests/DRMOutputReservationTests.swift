import CDRM
import KioskCore
@testable import KioskDisplay
import XCTest

/// Two outputs on one card, against fabricated resources and a session without a card: what one output holds (its
/// connector, CRTC, planes) the other chooses around, the first modeset leaves alone, and a claim lets go of when
/// it goes away.
final class DRMOutputReservationTests: XCTestCase {
    /// HDMI-A-1 reachable from CRTCs 40 and 41, DSI-1 only from 41, both connected; a primary plane per CRTC, an
    /// overlay plane either CRTC can use.
    private func resources() -> DRMResources {
        let crtcs = [DRMResources.CRTC(id: 40, index: 0, bufferID: nil, x: 0, y: 0, mode: nil, properties: .init()),
                     DRMResources.CRTC(id: 41, index: 1, bufferID: nil, x: 0, y: 0, mode: nil, properties: .init())]
        let encoders = [DRMResources.Encoder(id: 30, crtcID: nil, possibleCRTCs: 0b11),
                        DRMResources.Encoder(id: 31, crtcID: nil, possibleCRTCs: 0b10)]
        var raw = drmModeModeInfo()
        raw.hdisplay = 800; raw.vdisplay = 600; raw.htotal = 900; raw.vtotal = 650; raw.vrefresh = 60
        raw.clock = 900 * 650 * 60 / 1000
        raw.type = UInt32(DRM_MODE_TYPE_PREFERRED)
        let modes = [DRMResources.makeMode(raw)]
        let connectors = [
            DRMResources.Connector(id: 20, name: "HDMI-A-1", type: UInt32(DRM_MODE_CONNECTOR_HDMIA), status: .connected,
                                   modes: modes, encoderIDs: [30], currentEncoderID: nil, properties: .init()),
            DRMResources.Connector(id: 21, name: "DSI-1", type: UInt32(DRM_MODE_CONNECTOR_DSI), status: .connected,
                                   modes: modes, encoderIDs: [31], currentEncoderID: nil, properties: .init()),
        ]
        let planes = [
            DRMResources.Plane(id: 50, type: .primary, possibleCRTCs: 0b01, formats: [drmFormatXRGB8888], crtcID: nil, bufferID: nil, properties: .init()),
            DRMResources.Plane(id: 51, type: .primary, possibleCRTCs: 0b10, formats: [drmFormatXRGB8888], crtcID: nil, bufferID: nil, properties: .init()),
            DRMResources.Plane(id: 52, type: .overlay, possibleCRTCs: 0b11, formats: [drmFormatXRGB8888], crtcID: nil, bufferID: nil, properties: .init()),
        ]
        return DRMResources(connectors: connectors, encoders: encoders, crtcs: crtcs, planes: planes)
    }

    private func held(crtc: UInt32, plane: UInt32, connector: UInt32, by name: String) -> DRMTakenObjects {
        DRMTakenObjects(connectors: [connector: "connector \(name)"], crtcs: [crtc: "connector \(name)"],
                        planes: [plane: "connector \(name)"])
    }

    func testASecondOutputTakesACRTCAndPrimaryPlaneTheFirstDoesNotUse() throws {
        let res = resources()
        let first = try DRMOutputPlan.choose(in: res, device: "d", connector: "HDMI-A-1", mode: nil)
        XCTAssertEqual(first.crtc.id, 40, "alone, the first CRTC its encoder reaches")
        // DSI-1 holds CRTC 41: HDMI-A-1 can still use CRTC 40.
        let beside = try DRMOutputPlan.choose(in: res, device: "d", connector: "HDMI-A-1", mode: nil,
                                              taken: held(crtc: 41, plane: 51, connector: 21, by: "DSI-1"))
        XCTAssertEqual(beside.crtc.id, 40)
        XCTAssertEqual(beside.primaryPlane.id, 50)
        // HDMI-A-1 holds CRTC 41 (it may use either): DSI-1, which reaches only 41, cannot be driven.
        XCTAssertThrowsError(try DRMOutputPlan.choose(in: res, device: "/dev/dri/card0", connector: "DSI-1", mode: nil,
                                                      taken: held(crtc: 41, plane: 51, connector: 20, by: "HDMI-A-1"))) { error in
            XCTAssertTrue(error is DRMObjectsTakenError)
            XCTAssertEqual("\(error)", "connector DSI-1 on /dev/dri/card0: every CRTC it can use is taken by another output: CRTC 41 (connector HDMI-A-1)")
        }
    }

    func testWithNoConnectorNamedTheFirstConnectedOneNoOtherOutputHoldsIsChosen() throws {
        let res = resources()
        let second = try DRMOutputPlan.choose(in: res, device: "d", connector: nil, mode: nil,
                                              taken: held(crtc: 40, plane: 50, connector: 20, by: "HDMI-A-1"))
        XCTAssertEqual(second.connector.name, "DSI-1")
        XCTAssertEqual(second.crtc.id, 41)
        XCTAssertEqual(second.primaryPlane.id, 51)
        // Naming a connector another output drives says so.
        XCTAssertThrowsError(try DRMOutputPlan.choose(in: res, device: "d", connector: "hdmi-a-1", mode: nil,
                                                      taken: held(crtc: 40, plane: 50, connector: 20, by: "HDMI-A-1"))) { error in
            XCTAssertEqual("\(error)", "connector HDMI-A-1 on d: is driven by another output (connector HDMI-A-1)")
        }
        // Both held: the error names the first connected connector.
        var both = held(crtc: 40, plane: 50, connector: 20, by: "HDMI-A-1")
        both.merge(held(crtc: 41, plane: 51, connector: 21, by: "DSI-1"))
        XCTAssertThrowsError(try DRMOutputPlan.choose(in: res, device: "d", connector: nil, mode: nil, taken: both)) { error in
            XCTAssertEqual("\(error)", "connector HDMI-A-1 on d: is driven by another output (connector HDMI-A-1)")
        }
    }

    func testTheFirstModesetLeavesWhatAnotherOutputHoldsOn() throws {
        var res = resources()
        // A previous master left HDMI-A-1 on CRTC 41 with the overlay there; another output now drives CRTC 41
        // (DSI-1) with the overlay plane.
        res.encoders[0].crtcID = 41
        res.connectors[0].currentEncoderID = 30
        res.planes[1].crtcID = 41
        res.planes[2].crtcID = 41
        var dsi = held(crtc: 41, plane: 51, connector: 21, by: "DSI-1")
        let plan = try DRMOutputPlan.choose(in: res, device: "d", connector: "HDMI-A-1", mode: nil, taken: dsi)
        XCTAssertEqual(plan.crtc.id, 40, "not the CRTC the connector is on: another output holds it")
        XCTAssertEqual(DRMStrayState.find(in: res, plan: plan).crtcIDs, [41], "alone, the connector's old CRTC is turned off")
        XCTAssertTrue(DRMStrayState.find(in: res, plan: plan, taken: dsi).isEmpty,
                      "another output's CRTC and what is on it are never turned off")
        // A plane another output holds is left alone even on this output's own CRTC.
        res.planes[2].crtcID = 40
        XCTAssertEqual(DRMStrayState.find(in: res, plan: plan, taken: dsi).planeIDs, [52])
        dsi.planes[52] = "connector DSI-1 (overlay)"
        XCTAssertTrue(DRMStrayState.find(in: res, plan: plan, taken: dsi).isEmpty)
    }

    func testClaimsHoldUntilTheyGoAwayAndEachSeesOnlyTheOthers() {
        let session = DRMCardSession(fd: -1, path: "/dev/dri/card9")
        var first: DRMClaim? = session.claim(held(crtc: 40, plane: 50, connector: 20, by: "HDMI-A-1"))
        let second = session.claim(DRMTakenObjects(planes: [52: "connector DSI-1 (overlay)"]))
        XCTAssertEqual(session.taken().crtcs, [40: "connector HDMI-A-1"])
        XCTAssertEqual(session.taken().planes.keys.sorted(), [50, 52])
        XCTAssertEqual(session.taken(except: first).planes, [52: "connector DSI-1 (overlay)"], "its own claim is not taken for it")
        XCTAssertTrue(session.taken(except: first).crtcs.isEmpty)
        first = nil
        XCTAssertEqual(session.taken(), DRMTakenObjects(planes: [52: "connector DSI-1 (overlay)"]), "a claim gone is released")
        withExtendedLifetime(second) {}
    }

    func testALateFlipEventForAnOutputThatHasGoneIsDropped() {
        // The token a page flip carries as user data round-trips through the pointer libdrm hands back.
        XCTAssertEqual(UInt(bitPattern: DRMCardSession.userData(for: 7)), 7)
        XCTAssertNil(DRMCard.openCard(fd: -1), "an fd no shared card has finds no session: the event is not delivered")
    }
}
