import CDRM
import KioskCore

/// A readable description of every card, in the spirit of `modetest -c -p`: what a board offers, before a
/// board file is written for it. Runs on the calling thread (the `kioskd devices` command's main thread).
public enum DeviceReport {
    /// `properties`: list every connector, CRTC and plane property with its value, as `modetest` does.
    public static func describeAll(in directory: String = "/dev/dri", properties: Bool = false) -> String {
        let paths = DRMCard.cardPaths(in: directory)
        guard !paths.isEmpty else { return "no DRM devices: \(directory) has no card nodes\n" }
        return paths.map { path in
            do { return try describe(card: DRMCard(path: path), properties: properties) } catch { return "\(path): \(error)\n" }
        }.joined(separator: "\n")
    }

    public static func describe(card: DRMCard, properties: Bool = false) throws -> String {
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
                out += "      modes:\n"
                for m in c.modes { out += "        " + describe(mode: m) + "\n" }
            }
            if properties { out += "      properties:\n" + c.properties.lines(indent: "        ") }
        }
        out += "  CRTCs:\n"
        for c in res.crtcs {
            let state = c.mode.map { "active \($0.mode.exactDescription)" } ?? "off"
            out += "    \(c.id) [index \(c.index)]: \(state)\(c.bufferID.map { ", framebuffer \($0)" } ?? "")\n"
            if properties { out += "      properties:\n" + c.properties.lines(indent: "        ") }
        }
        out += "  planes:\n"
        for p in res.planes {
            let crtcs = res.crtcs.filter { p.possibleCRTCs & (1 << UInt32($0.index)) != 0 }.map { String($0.id) }
            let damage = p.properties["FB_DAMAGE_CLIPS"] != nil ? ", damage clips" : ""
            out += "    \(p.id): \(p.type.rawValue), CRTCs [\(crtcs.joined(separator: " "))]\(damage)"
                + "\(p.crtcID.map { ", on CRTC \($0)" } ?? "")\n"
            out += "      formats: " + p.formats.map(fourccString).joined(separator: " ") + "\n"
            if properties { out += "      properties:\n" + p.properties.lines(indent: "        ") }
        }
        return out
    }

    /// `1920x1080@59.94 (preferred): 148.352 MHz, h 1920 2008 2052 2200, v 1080 1084 1089 1125, phsync pvsync`:
    /// the exact refresh from the timings, then the timings themselves, as modetest lists them.
    static func describe(mode m: DRMResources.Mode) -> String {
        let raw = m.raw
        let kHz = Int(raw.clock)
        let clock = "\(kHz / 1000).\(String(repeating: "0", count: 3 - String(kHz % 1000).count))\(kHz % 1000) MHz"
        var flags: [String] = []
        let names: [(Int32, String)] = [
            (DRM_MODE_FLAG_PHSYNC, "phsync"), (DRM_MODE_FLAG_NHSYNC, "nhsync"), (DRM_MODE_FLAG_PVSYNC, "pvsync"),
            (DRM_MODE_FLAG_NVSYNC, "nvsync"), (DRM_MODE_FLAG_INTERLACE, "interlace"), (DRM_MODE_FLAG_DBLSCAN, "dblscan"),
        ]
        for (bit, name) in names where raw.flags & UInt32(bit) != 0 { flags.append(name) }
        var text = m.mode.exactDescription + (m.mode.isPreferred ? " (preferred)" : "") + ": \(clock)"
        text += ", h \(raw.hdisplay) \(raw.hsync_start) \(raw.hsync_end) \(raw.htotal)"
        text += ", v \(raw.vdisplay) \(raw.vsync_start) \(raw.vsync_end) \(raw.vtotal)"
        if !flags.isEmpty { text += ", " + flags.joined(separator: " ") }
        return text
    }
}
