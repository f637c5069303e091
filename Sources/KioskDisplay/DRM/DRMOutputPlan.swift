import KioskCore

/// Which connector, mode, CRTC and primary plane an output uses. Chosen from a resources snapshot only, so the
/// rules are testable with fabricated resources.
public struct DRMOutputPlan: Sendable {
    public var connector: DRMResources.Connector
    public var mode: DRMResources.Mode
    public var crtc: DRMResources.CRTC
    public var primaryPlane: DRMResources.Plane

    /// - connector: a name such as `HDMI-A-1`, or nil for the first connected one that can be driven;
    /// - mode: `WxH[@Hz]`, or nil for the connector's preferred mode;
    /// - taken: what other outputs on the card hold: their connectors are not chosen, their CRTCs and planes not
    ///   used. A connector all of whose CRTCs are taken cannot be driven (`DRMObjectsTakenError`).
    /// Errors name the problem and list the valid choices.
    public static func choose(in res: DRMResources, device: String, connector name: String?, mode request: ModeRequest?,
                              format: UInt32 = drmFormatXRGB8888, taken: DRMTakenObjects = DRMTakenObjects()) throws -> DRMOutputPlan {
        let candidates = res.connectors.filter { !$0.isWriteback }
        let listing = candidates.map { "\($0.name) (\($0.status.rawValue))" }.joined(separator: ", ")
        if let name {
            guard let c = candidates.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw OutputError("connector \(name) not found on \(device); connectors: \(listing.isEmpty ? "none" : listing)")
            }
            guard c.status != .disconnected else {
                throw OutputError("connector \(c.name) on \(device) is disconnected; connectors: \(listing)")
            }
            return try plan(for: c, in: res, device: device, mode: request, format: format, taken: taken)
        }
        let connected = candidates.filter { $0.status == .connected }
        guard !connected.isEmpty else {
            throw OutputError("no connected connector on \(device); connectors: \(listing.isEmpty ? "none" : listing)")
        }
        // The first connected connector another output does not hold, and whose CRTCs are not all taken.
        var firstTaken: DRMObjectsTakenError?
        for c in connected {
            do {
                return try plan(for: c, in: res, device: device, mode: request, format: format, taken: taken)
            } catch let error as DRMObjectsTakenError {
                firstTaken = firstTaken ?? error
            }
        }
        throw firstTaken!
    }

    private static func plan(for connector: DRMResources.Connector, in res: DRMResources, device: String,
                             mode request: ModeRequest?, format: UInt32, taken: DRMTakenObjects) throws -> DRMOutputPlan {
        if let holder = taken.connectors[connector.id] {
            throw DRMObjectsTakenError(connector: connector.name, device: device, message: "is driven by another output (\(holder))")
        }
        let modes = connector.modes.map(\.mode)
        guard !modes.isEmpty else { throw OutputError("connector \(connector.name): reports no modes") }
        guard let chosen = modes.select(request), let mode = connector.modes.first(where: { $0.mode == chosen }) else {
            throw OutputError("mode \(request?.description ?? "") not offered by connector \(connector.name); modes: "
                + modes.distinctDescriptions.joined(separator: ", "))
        }

        // Prefer the CRTC already driving this connector (no needless reroute), then any its encoders can reach;
        // never one another output holds.
        var crtcMask: UInt32 = 0
        for id in connector.encoderIDs { crtcMask |= res.encoder(id: id)?.possibleCRTCs ?? 0 }
        let current = connector.currentEncoderID.flatMap { res.encoder(id: $0)?.crtcID }.flatMap { res.crtc(id: $0) }
        let reachable = res.crtcs.filter { crtcMask & (1 << UInt32($0.index)) != 0 }
        let ordered = (current.map { [$0] } ?? []) + reachable.filter { $0.id != current?.id }
        let free = ordered.filter { reachable.map(\.id).contains($0.id) && taken.crtcs[$0.id] == nil }
        for crtc in free {
            if let plane = res.planes.first(where: {
                $0.type == .primary && $0.possibleCRTCs & (1 << UInt32(crtc.index)) != 0 && $0.formats.contains(format)
                    && taken.planes[$0.id] == nil
            }) {
                return DRMOutputPlan(connector: connector, mode: mode, crtc: crtc, primaryPlane: plane)
            }
        }
        if reachable.isEmpty { throw OutputError("connector \(connector.name): no CRTC reachable through its encoders") }
        if free.isEmpty {
            let holders = reachable.map { "CRTC \($0.id) (\(taken.crtcs[$0.id] ?? "free"))" }.joined(separator: ", ")
            throw DRMObjectsTakenError(connector: connector.name, device: device,
                                       message: "every CRTC it can use is taken by another output: \(holders)")
        }
        throw OutputError("connector \(connector.name): no \(taken.planes.isEmpty ? "" : "free ")primary plane supporting \(fourccString(format)) on CRTCs "
            + free.map { String($0.id) }.joined(separator: ", "))
    }
}

/// A connector that exists and is connected but cannot be driven now, because other outputs on the card hold it or
/// every CRTC it can use. A plain value.
public struct DRMObjectsTakenError: Error, CustomStringConvertible, Sendable {
    public let connector: String
    public let device: String
    public let message: String

    public var description: String { "connector \(connector) on \(device): \(message)" }
}
