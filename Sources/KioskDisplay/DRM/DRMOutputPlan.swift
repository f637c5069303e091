import KioskCore

/// Which connector, mode, CRTC and primary plane an output uses. Chosen from a resources snapshot only, so the
/// rules are testable with fabricated resources.
public struct DRMOutputPlan: Sendable {
    public var connector: DRMResources.Connector
    public var mode: DRMResources.Mode
    public var crtc: DRMResources.CRTC
    public var primaryPlane: DRMResources.Plane

    /// - connector: a name such as `HDMI-A-1`, or nil for the first connected one;
    /// - mode: `WxH[@Hz]`, or nil for the connector's preferred mode.
    /// Errors name the problem and list the valid choices.
    public static func choose(in res: DRMResources, device: String, connector name: String?, mode request: ModeRequest?,
                              format: UInt32 = drmFormatXRGB8888) throws -> DRMOutputPlan {
        let candidates = res.connectors.filter { !$0.isWriteback }
        let listing = candidates.map { "\($0.name) (\($0.status.rawValue))" }.joined(separator: ", ")
        let connector: DRMResources.Connector
        if let name {
            guard let c = candidates.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw DisplayError("connector \(name) not found on \(device); connectors: \(listing.isEmpty ? "none" : listing)")
            }
            guard c.status != .disconnected else {
                throw DisplayError("connector \(c.name) on \(device) is disconnected; connectors: \(listing)")
            }
            connector = c
        } else {
            guard let c = candidates.first(where: { $0.status == .connected }) else {
                throw DisplayError("no connected connector on \(device); connectors: \(listing.isEmpty ? "none" : listing)")
            }
            connector = c
        }

        let modes = connector.modes.map(\.mode)
        guard !modes.isEmpty else { throw DisplayError("connector \(connector.name): reports no modes") }
        guard let chosen = modes.select(request), let mode = connector.modes.first(where: { $0.mode == chosen }) else {
            throw DisplayError("mode \(request?.description ?? "") not offered by connector \(connector.name); modes: "
                + modes.distinctDescriptions.joined(separator: ", "))
        }

        // Prefer the CRTC already driving this connector (no needless reroute), then any its encoders can reach.
        var crtcMask: UInt32 = 0
        for id in connector.encoderIDs { crtcMask |= res.encoder(id: id)?.possibleCRTCs ?? 0 }
        let current = connector.currentEncoderID.flatMap { res.encoder(id: $0)?.crtcID }.flatMap { res.crtc(id: $0) }
        let reachable = res.crtcs.filter { crtcMask & (1 << UInt32($0.index)) != 0 }
        let ordered = (current.map { [$0] } ?? []) + reachable.filter { $0.id != current?.id }
        for crtc in ordered {
            if let plane = res.planes.first(where: {
                $0.type == .primary && $0.possibleCRTCs & (1 << UInt32(crtc.index)) != 0 && $0.formats.contains(format)
            }) {
                return DRMOutputPlan(connector: connector, mode: mode, crtc: crtc, primaryPlane: plane)
            }
        }
        if reachable.isEmpty { throw DisplayError("connector \(connector.name): no CRTC reachable through its encoders") }
        throw DisplayError("connector \(connector.name): no primary plane supporting \(fourccString(format)) on CRTCs "
            + reachable.map { String($0.id) }.joined(separator: ", "))
    }
}
