import CDRM
import KioskCore

/// A readable description of every card, in the spirit of `modetest -c -p`: what a board offers, before a
/// board file is written for it.
public enum DeviceReport {
    public static func describeAll(in directory: String = "/dev/dri") -> String {
        let paths = DRMCard.cardPaths(in: directory)
        guard !paths.isEmpty else { return "no DRM devices: \(directory) has no card nodes\n" }
        return paths.map { path in
            do { return try describe(card: DRMCard(path: path)) } catch { return "\(path): \(error)\n" }
        }.joined(separator: "\n")
    }

    public static func describe(card: DRMCard) throws -> String {
        card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        let atomic = card.setClientCap(Int32(DRM_CLIENT_CAP_ATOMIC), 1)
        if atomic { card.setClientCap(Int32(DRM_CLIENT_CAP_WRITEBACK_CONNECTORS), 1) }
        let res = try DRMResources(card: card)
        var out = "\(card.path): driver \(card.driver)"
        if !card.driverDescription.isEmpty { out += " (\(card.driverDescription))" }
        out += ", \(atomic ? "atomic" : "legacy only")\n"

        out += "  connectors:\n"
        for c in res.connectors {
            let crtc = c.currentEncoderID.flatMap { res.encoder(id: $0)?.crtcID }
            let status = c.isWriteback ? "writeback" : c.status.rawValue
            out += "    \(c.name) [id \(c.id)]: \(status)\(crtc.map { ", on CRTC \($0)" } ?? "")\n"
            if !c.modes.isEmpty {
                let modes = c.modes.map { m in
                    m.mode.description + (m.mode.isPreferred ? " (preferred)" : "")
                }
                var seen = Set<String>()
                out += "      modes: " + modes.filter { seen.insert($0).inserted }.joined(separator: ", ") + "\n"
            }
        }
        out += "  CRTCs:\n"
        for c in res.crtcs {
            let state = c.mode.map { "active \($0.mode)" } ?? "off"
            out += "    \(c.id) [index \(c.index)]: \(state)\(c.bufferID.map { ", framebuffer \($0)" } ?? "")\n"
        }
        out += "  planes:\n"
        for p in res.planes {
            let crtcs = res.crtcs.filter { p.possibleCRTCs & (1 << UInt32($0.index)) != 0 }.map { String($0.id) }
            let damage = p.properties["FB_DAMAGE_CLIPS"] != nil ? ", damage clips" : ""
            out += "    \(p.id): \(p.type.rawValue), CRTCs [\(crtcs.joined(separator: " "))]\(damage)"
                + "\(p.crtcID.map { ", on CRTC \($0)" } ?? "")\n"
            out += "      formats: " + p.formats.map(fourccString).joined(separator: " ") + "\n"
        }
        return out
    }
}
