import CDRM
import KioskCore
@testable import KioskDisplay
import XCTest

/// What the first modeset turns off, chosen from fabricated resources: the rule without a kernel.
final class DRMStrayStateTests: XCTestCase {
    /// DSI-1 (connector 21) reachable from CRTCs 40 and 41; a previous master left it on CRTC 40, with an overlay
    /// on 40, a cursor on 41, and an overlay on CRTC 42 that has nothing to do with DSI-1.
    private func resources() -> DRMResources {
        let crtcs = [40, 41, 42].enumerated().map { index, id in
            DRMResources.CRTC(id: UInt32(id), index: index, bufferID: nil, x: 0, y: 0, mode: nil, properties: .init())
        }
        let encoders = [DRMResources.Encoder(id: 30, crtcID: 40, possibleCRTCs: 0b011)]
        var mode = drmModeModeInfo()
        mode.hdisplay = 800; mode.vdisplay = 480; mode.htotal = 900; mode.vtotal = 530; mode.vrefresh = 60
        mode.clock = 900 * 530 * 60 / 1000
        let connectors = [DRMResources.Connector(id: 21, name: "DSI-1", type: UInt32(DRM_MODE_CONNECTOR_DSI), status: .connected,
                                                 modes: [DRMResources.makeMode(mode)], encoderIDs: [30], currentEncoderID: 30,
                                                 properties: .init())]
        func plane(_ id: UInt32, _ type: DRMResources.PlaneType, on crtc: UInt32?, possible: UInt32) -> DRMResources.Plane {
            DRMResources.Plane(id: id, type: type, possibleCRTCs: possible, formats: [drmFormatXRGB8888], crtcID: crtc,
                               bufferID: crtc == nil ? nil : 99, properties: .init())
        }
        let planes = [
            plane(50, .primary, on: 40, possible: 0b001),
            plane(51, .primary, on: nil, possible: 0b010),
            plane(52, .overlay, on: 40, possible: 0b011),
            plane(53, .cursor, on: 41, possible: 0b010),
            plane(54, .overlay, on: 42, possible: 0b100),
            plane(55, .overlay, on: nil, possible: 0b011),
        ]
        return DRMResources(connectors: connectors, encoders: encoders, crtcs: crtcs, planes: planes)
    }

    func testPlanesOnTheChosenCRTCAndAnotherCRTCDrivingTheConnectorAreTurnedOff() throws {
        let res = resources()
        var plan = try DRMOutputPlan.choose(in: res, device: "d", connector: "DSI-1", mode: nil)
        plan.crtc = res.crtcs[1]
        plan.primaryPlane = res.planes[1]
        let stray = DRMStrayState.find(in: res, plan: plan)
        XCTAssertEqual(stray.crtcIDs, [40], "the CRTC a previous master left on the connector")
        XCTAssertEqual(stray.planeIDs, [50, 52, 53], "everything on CRTCs 40 and 41 but our primary plane")
        XCTAssertEqual(stray.description, "plane 50, plane 52, plane 53, CRTC 40")
    }

    func testNothingStrayWhenTheConnectorIsOnTheChosenCRTCWithItsPrimaryPlaneAlone() throws {
        var res = resources()
        res.planes.removeAll { $0.type != .primary }
        let plan = try DRMOutputPlan.choose(in: res, device: "d", connector: "DSI-1", mode: nil)
        XCTAssertEqual(plan.crtc.id, 40)
        XCTAssertTrue(DRMStrayState.find(in: res, plan: plan).isEmpty)
    }
}
