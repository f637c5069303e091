import CDRM
import KioskCore

/// What a previous DRM master left on that kioskd's output must not show: overlay and cursor planes on the chosen
/// CRTC, and another CRTC still driving the chosen connector (with its planes). What another output on the card
/// holds (`taken`: its CRTC, its planes) is never turned off: the connector is routed away from such a CRTC by the
/// modeset itself. Chosen from a resources snapshot only, so the rule is testable with fabricated resources. A
/// plain value.
public struct DRMStrayState: Sendable, Equatable {
    /// Planes to turn off (FB_ID = 0, CRTC_ID = 0).
    public var planeIDs: [UInt32] = []
    /// CRTCs to turn off (ACTIVE = 0, MODE_ID = 0).
    public var crtcIDs: [UInt32] = []

    public var isEmpty: Bool { planeIDs.isEmpty && crtcIDs.isEmpty }

    public static func find(in res: DRMResources, plan: DRMOutputPlan,
                            taken: DRMTakenObjects = DRMTakenObjects()) -> DRMStrayState {
        var stray = DRMStrayState()
        let routedCRTC = plan.connector.currentEncoderID.flatMap { res.encoder(id: $0)?.crtcID }
        if let other = routedCRTC, other != plan.crtc.id, taken.crtcs[other] == nil {
            stray.crtcIDs.append(other)
        }
        let crtcs = Set([plan.crtc.id] + stray.crtcIDs)
        stray.planeIDs = res.planes.filter { plane in
            guard plane.id != plan.primaryPlane.id, taken.planes[plane.id] == nil, let crtc = plane.crtcID else { return false }
            return crtcs.contains(crtc)
        }.map(\.id)
        return stray
    }

    public var description: String {
        let planes = planeIDs.map { "plane \($0)" }, crtcs = crtcIDs.map { "CRTC \($0)" }
        return (planes + crtcs).joined(separator: ", ")
    }
}

extension DRMBackend {
    /// The planes and CRTCs to turn off in an atomic modeset, accepted by a TEST_ONLY commit of the whole modeset
    /// with them; nil when there is nothing to turn off or the kernel refused (then the modeset goes without, and
    /// the log says what stays on).
    func strayStateForModeset(buffer: DumbBuffer, modeBlobID: UInt32) -> (DRMStrayState, DRMResources)? {
        guard let res = try? DRMResources(card: card) else { return nil }
        let stray = DRMStrayState.find(in: res, plan: plan, taken: card.session.taken(except: claim))
        guard !stray.isEmpty, let probe = try? modesetRequest(buffer: buffer, modeBlobID: modeBlobID) else { return nil }
        let conn = plan.connector
        addTurningOff(stray, from: res, to: probe)
        let flags = UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET) | UInt32(DRM_MODE_ATOMIC_TEST_ONLY)
        if case .failure(let e) = probe.commit(fd: card.fd, flags: flags, userData: nil) {
            logger.warning("connector \(conn.name): turning off what a previous master left on (\(stray.description)) was refused in a TEST_ONLY commit: \(e.message); they stay on")
            return nil
        }
        return (stray, res)
    }

    func addTurningOff(_ stray: DRMStrayState, from res: DRMResources, to req: AtomicRequest) {
        for id in stray.planeIDs {
            guard let plane = res.planes.first(where: { $0.id == id }) else { continue }
            req.add(id, plane.properties["FB_ID"]?.id, 0, what: "plane \(id) FB_ID")
            req.add(id, plane.properties["CRTC_ID"]?.id, 0, what: "plane \(id) CRTC_ID")
        }
        for id in stray.crtcIDs {
            guard let crtc = res.crtcs.first(where: { $0.id == id }) else { continue }
            req.add(id, crtc.properties["ACTIVE"]?.id, 0, what: "CRTC \(id) ACTIVE")
            req.add(id, crtc.properties["MODE_ID"]?.id, 0, what: "CRTC \(id) MODE_ID")
        }
    }
}
