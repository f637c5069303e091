import CCairo
import KioskCore
#if canImport(Glibc)
import Glibc
#endif

/// The built-in first moving picture: a clock, the date, a bar that moves every frame and a caption with the frame
/// number and mode. It proves the whole path (render, present, flip) before any scene file exists.
///
/// A plain `Sendable` value with no shared mutable state, so any render worker may draw it; every Cairo and Pango
/// object lives only inside one `draw` call. Drawing is a pure function of its arguments: the wall clock is passed
/// in, never read here, so the same frame renders to the same pixels.
public struct DemoScene: Sendable {
    /// The wall-clock reading shown on screen. A plain value.
    public struct Clock: Hashable, Sendable {
        public var hours: Int
        public var minutes: Int
        public var seconds: Int
        /// Already formatted for display, e.g. "Saturday, 22 November 2025".
        public var date: String

        public init(hours: Int, minutes: Int, seconds: Int, date: String) {
            self.hours = hours; self.minutes = minutes; self.seconds = seconds; self.date = date
        }

        /// `HH:MM:SS`.
        public var timeText: String {
            "\(twoDigits(hours)):\(twoDigits(minutes)):\(twoDigits(seconds))"
        }

        /// The local time now (time(2) and localtime_r(3), so the TZ environment applies).
        public static func current() -> Clock {
            var now = time(nil)
            var local = tm()
            guard localtime_r(&now, &local) != nil else {
                return Clock(hours: 0, minutes: 0, seconds: 0, date: "")
            }
            var buffer = [CChar](repeating: 0, count: 128)
            let length = strftime(&buffer, buffer.count, "%A, %d %B %Y", &local)
            let date = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return Clock(hours: Int(local.tm_hour), minutes: Int(local.tm_min), seconds: Int(local.tm_sec), date: date)
        }
    }

    /// Where each element goes for one output size; pure geometry, so tests can look in the right places.
    public struct Layout: Hashable, Sendable {
        public var size: Size
        /// The full-width band the time is centred in.
        public var timeBand: Rect
        /// The full-width band the date is centred in.
        public var dateBand: Rect
        /// The full-width strip the bar moves along.
        public var barTrack: Rect
        /// The bar's width in pixels.
        public var barWidth: Int
        /// The full-width band at the bottom holding the caption.
        public var captionBand: Rect
        public var timePixelSize: Int
        public var datePixelSize: Int
        public var captionPixelSize: Int
    }

    public static let backgroundTop = Color(rgb: 0x1A1D26)
    public static let backgroundBottom = Color(rgb: 0x07080C)
    public static let timeColor = Color(rgb: 0xEEF0F4)
    public static let dateColor = Color(rgb: 0x9EA8BC)
    public static let trackColor = Color(rgb: 0x242733)
    public static let barColor = Color(rgb: 0xFA9E28)
    public static let captionColor = Color(rgb: 0x6E7587)

    /// How far the bar moves per frame, in pixels.
    public var barStep: Int

    public init(barStep: Int = 8) {
        self.barStep = barStep
    }

    public func layout(for size: Size) -> Layout {
        let w = max(size.width, 1), h = max(size.height, 1)
        let timePx = max(h / 6, 6)
        let datePx = max(h / 24, 4)
        let captionPx = max(h / 40, 4)

        let timeHeight = timePx * 3 / 2
        let timeBand = Rect(x: 0, y: h * 2 / 5 - timeHeight / 2, width: w, height: timeHeight)
        let dateBand = Rect(x: 0, y: timeBand.maxY + datePx / 2, width: w, height: datePx * 3 / 2)
        let trackHeight = max(h / 48, 4)
        let barTrack = Rect(x: 0, y: h * 3 / 4 - trackHeight / 2, width: w, height: trackHeight)
        let captionHeight = captionPx * 2
        let captionBand = Rect(x: 0, y: h - captionHeight - captionPx / 2, width: w, height: captionHeight)
        return Layout(size: size, timeBand: timeBand, dateBand: dateBand, barTrack: barTrack,
                      barWidth: max(w / 8, 8), captionBand: captionBand,
                      timePixelSize: timePx, datePixelSize: datePx, captionPixelSize: captionPx)
    }

    /// The bar's left edge at `frame`: `frame * barStep` wrapped to the width, for any frame number.
    public func barOffset(frame: Int, width: Int) -> Int {
        guard width > 0 else { return 0 }
        // Reduce both factors first so the product cannot overflow however large the frame number grows.
        let f = ((frame % width) + width) % width
        let s = ((barStep % width) + width) % width
        return (f * s) % width
    }

    /// The rectangles the bar covers at `frame`: one, or two when it wraps past the right edge.
    public func barRects(frame: Int, size: Size) -> [Rect] {
        let layout = layout(for: size)
        let x = barOffset(frame: frame, width: size.width)
        let track = layout.barTrack
        var rects = [Rect(x: x, y: track.y, width: min(layout.barWidth, size.width - x), height: track.height)]
        let overflow = x + layout.barWidth - size.width
        if overflow > 0 {
            rects.append(Rect(x: 0, y: track.y, width: min(overflow, size.width), height: track.height))
        }
        return rects
    }

    /// `frame 123 · 1024x768@60`; the size alone when the refresh is unknown.
    public static func caption(frame: Int, size: Size, mode: DisplayMode?) -> String {
        "frame \(frame) · \(mode.map { $0.description } ?? size.description)"
    }

    /// Draws frame `frame` into a backend buffer. `mode` only feeds the caption.
    public func draw(into buffer: PixelBuffer, frame: Int, wallClock: Clock, mode: DisplayMode? = nil) throws {
        try CairoCanvas.withCanvas(on: buffer) { canvas in
            try draw(on: canvas, frame: frame, wallClock: wallClock, mode: mode)
        }
    }

    /// Draws frame `frame` onto any canvas, covering all of it.
    public func draw(on canvas: CairoCanvas, frame: Int, wallClock: Clock, mode: DisplayMode? = nil) throws {
        let cr = canvas.cairoContext
        let size = canvas.size
        let layout = layout(for: size)

        try paintBackground(on: cr, size: size)

        try drawText(wallClock.timeText, font: "Sans Bold", pixelSize: Double(layout.timePixelSize),
                     color: Self.timeColor, in: layout.timeBand, alignment: .center,
                     fitWidth: size.width * 9 / 10, tabularDigits: true, on: cr)
        try drawText(wallClock.date, font: "Sans", pixelSize: Double(layout.datePixelSize),
                     color: Self.dateColor, in: layout.dateBand, alignment: .center,
                     fitWidth: size.width * 9 / 10, on: cr)

        canvas.fill(layout.barTrack, color: Self.trackColor)
        for rect in barRects(frame: frame, size: size) {
            canvas.fill(rect, color: Self.barColor)
        }

        try drawText(Self.caption(frame: frame, size: size, mode: mode), font: "Sans",
                     pixelSize: Double(layout.captionPixelSize), color: Self.captionColor,
                     in: layout.captionBand, alignment: .leading(inset: max(size.width / 64, 4)),
                     fitWidth: size.width - 2 * max(size.width / 64, 4), tabularDigits: true, on: cr)

        try canvas.checkStatus()
    }

    private func paintBackground(on cr: OpaquePointer, size: Size) throws {
        let gradient = cairo_pattern_create_linear(0, 0, 0, Double(size.height))!
        defer { cairo_pattern_destroy(gradient) }  // cairo_set_source keeps its own reference
        let status = cairo_pattern_status(gradient)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RenderError("demo scene \(size): background gradient failed: \(cairoStatusString(status))")
        }
        let top = Self.backgroundTop, bottom = Self.backgroundBottom
        cairo_pattern_add_color_stop_rgba(gradient, 0, top.red, top.green, top.blue, top.alpha)
        cairo_pattern_add_color_stop_rgba(gradient, 1, bottom.red, bottom.green, bottom.blue, bottom.alpha)
        cairo_save(cr)
        cairo_set_source(cr, gradient)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_paint(cr)
        cairo_restore(cr)
    }
}

private func twoDigits(_ value: Int) -> String {
    value >= 0 && value < 10 ? "0\(value)" : "\(value)"
}
