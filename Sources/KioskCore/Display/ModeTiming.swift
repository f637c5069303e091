/// A mode's timings as the kernel describes them (`struct drm_mode_modeinfo`): enough to know its exact refresh
/// rate. A plain value, used on any thread.
public struct ModeTiming: Hashable, Sendable {
    /// Pixel clock in kHz.
    public var clockKHz: Int
    public var htotal: Int
    public var vtotal: Int
    /// Lines scanned per line of the mode (0 and 1 both mean once).
    public var vscan: Int
    /// DRM_MODE_FLAG_INTERLACE: two fields per frame, so the vertical rate doubles.
    public var isInterlaced: Bool
    /// DRM_MODE_FLAG_DBLSCAN: every line twice, so the vertical rate halves.
    public var isDoubleScan: Bool

    public init(clockKHz: Int, htotal: Int, vtotal: Int, vscan: Int = 0, isInterlaced: Bool = false, isDoubleScan: Bool = false) {
        self.clockKHz = clockKHz; self.htotal = htotal; self.vtotal = vtotal; self.vscan = vscan
        self.isInterlaced = isInterlaced; self.isDoubleScan = isDoubleScan
    }

    /// Vertical refresh in hertz, unrounded: the kernel's `drm_mode_vrefresh()` before its rounding. Nil when a
    /// total is zero (a mode without timings).
    public var refreshRate: Double? {
        guard clockKHz > 0, htotal > 0, vtotal > 0 else { return nil }
        var pixelsPerFrame = Double(htotal) * Double(vtotal)
        if isDoubleScan { pixelsPerFrame *= 2 }
        if vscan > 1 { pixelsPerFrame *= Double(vscan) }
        let rate = Double(clockKHz) * 1000 / pixelsPerFrame
        return isInterlaced ? rate * 2 : rate
    }

    /// `59.94`: a rate with two decimals, as `kioskd devices` prints it and `--mode` accepts it.
    public static func formatHz(_ rate: Double) -> String {
        let hundredths = Int((rate * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
