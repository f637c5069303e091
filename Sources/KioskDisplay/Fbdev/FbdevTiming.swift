import KioskCore

/// The timings of a framebuffer's video mode, from `struct fb_var_screeninfo`: enough to know its refresh rate.
/// A plain value, used on any thread.
public struct FbdevTiming: Hashable, Sendable {
    /// Pixel clock period in picoseconds; 0 when the driver does not say (many SPI panel drivers).
    public var pixclockPs: Int
    public var xres: Int, leftMargin: Int, rightMargin: Int, hsyncLen: Int
    public var yres: Int, upperMargin: Int, lowerMargin: Int, vsyncLen: Int
    /// FB_VMODE_INTERLACED: two fields per frame, so the vertical rate doubles.
    public var isInterlaced: Bool
    /// FB_VMODE_DOUBLE: every line twice, so the vertical rate halves.
    public var isDoubleScan: Bool

    public init(pixclockPs: Int, xres: Int, leftMargin: Int = 0, rightMargin: Int = 0, hsyncLen: Int = 0,
                yres: Int, upperMargin: Int = 0, lowerMargin: Int = 0, vsyncLen: Int = 0,
                isInterlaced: Bool = false, isDoubleScan: Bool = false) {
        self.pixclockPs = pixclockPs
        self.xres = xres; self.leftMargin = leftMargin; self.rightMargin = rightMargin; self.hsyncLen = hsyncLen
        self.yres = yres; self.upperMargin = upperMargin; self.lowerMargin = lowerMargin; self.vsyncLen = vsyncLen
        self.isInterlaced = isInterlaced; self.isDoubleScan = isDoubleScan
    }

    /// The refresh rate a framebuffer without timings is paced at.
    public static let fallbackRefreshRate = 60.0

    /// Vertical refresh in hertz from the pixel clock and the totals (as fbset computes it), or nil when the
    /// pixel clock is 0 or the result is not a plausible display rate (1 to 1000 Hz).
    public var refreshRate: Double? {
        let htotal = xres + leftMargin + rightMargin + hsyncLen
        let vtotal = yres + upperMargin + lowerMargin + vsyncLen
        guard pixclockPs > 0, htotal > 0, vtotal > 0 else { return nil }
        var rate = 1e12 / (Double(pixclockPs) * Double(htotal) * Double(vtotal))
        if isInterlaced { rate *= 2 }
        if isDoubleScan { rate /= 2 }
        return (1...1000).contains(rate) ? rate : nil
    }

    /// The display mode kioskd drives: the visible size, refreshing at `refreshRate`, else at 60 Hz.
    public var mode: OutputMode {
        OutputMode(width: xres, height: yres, refreshRate: refreshRate ?? Self.fallbackRefreshRate, name: "\(xres)x\(yres)",
                    isPreferred: true)
    }
}
