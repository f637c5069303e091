import CCairo
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KioskCore

/// A clock face: one line of text with tabular digits, vertically centred. The caller formats the time (on the main
/// thread, when its once-a-second timer fires) and passes the result in, so drawing never reads the clock and the
/// same value always draws the same pixels. A plain `Sendable` value.
public struct ClockContent: CairoDrawnContent, Hashable {
    public enum TimeZone: Hashable, Sendable {
        /// The process's local time (the TZ environment variable, else /etc/localtime).
        case local
        case utc
        /// An IANA time-zone name such as "Asia/Tokyo" or "America/New_York", from the system's tz database.
        case named(String)
    }

    /// What the clock shows, already formatted.
    public var text: String
    public var font: String
    public var color: Color
    public var alignment: TextContent.Alignment

    public init(text: String, font: String = "Sans Bold 48", color: Color = .white,
                alignment: TextContent.Alignment = .center) {
        self.text = text; self.font = font; self.color = color; self.alignment = alignment
    }

    /// Shows `time` (seconds since the epoch, a `time_t`) formatted with strftime(3) `format`, e.g. "%H:%M".
    public init(time: Int, format: String, timeZone: TimeZone = .local, font: String = "Sans Bold 48",
                color: Color = .white, alignment: TextContent.Alignment = .center) {
        self.init(text: Self.format(time: time, format: format, timeZone: timeZone), font: font, color: color,
                  alignment: alignment)
    }

    /// strftime(3) of `time` in `timeZone`; empty when the time cannot be converted, the zone name is unknown or the
    /// result is over 255 bytes. Safe on any thread.
    ///
    /// A named zone never goes through TZ and tzset(3), which change process-wide state under every other thread's
    /// localtime_r. Foundation's `TimeZone` gives the zone's UTC offset and abbreviation for that instant; gmtime_r
    /// of the shifted time gives the broken-down wall time, and `tm_gmtoff`/`tm_zone` carry the offset and
    /// abbreviation to strftime's %z and %Z. Abbreviations are Foundation's (ICU's): "EST", "CET", or "GMT+9"
    /// where the database has no name for the locale.
    public static func format(time: Int, format: String, timeZone: TimeZone = .local) -> String {
        var seconds = time_t(time)
        var broken = tm()
        switch timeZone {
        case .local:
            guard localtime_r(&seconds, &broken) != nil else { return "" }
            return strftime(format, &broken)
        case .utc:
            guard gmtime_r(&seconds, &broken) != nil else { return "" }
            return strftime(format, &broken)
        case .named(let identifier):
            guard let zone = Foundation.TimeZone(identifier: identifier) else { return "" }
            let instant = Date(timeIntervalSince1970: TimeInterval(time))
            let offset = zone.secondsFromGMT(for: instant)
            var shifted = time_t(time + offset)
            guard gmtime_r(&shifted, &broken) != nil else { return "" }
            broken.tm_gmtoff = offset
            broken.tm_isdst = zone.isDaylightSavingTime(for: instant) ? 1 : 0
            let abbreviation = zone.abbreviation(for: instant) ?? identifier
            // tm_zone borrows the C string, which lives until strftime returns.
            return abbreviation.withCString { name in
                broken.tm_zone = name
                return strftime(format, &broken)
            }
        }
    }

    private static func strftime(_ format: String, _ broken: inout tm) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = Glibc.strftime(&buffer, buffer.count, format, &broken)
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var kind: String { "clock" }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "clock content \(quotedPrefix(text))" }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let style = TextStyle(font: font, color: color, alignment: alignment, ellipsize: .end,
                              centersVertically: true, tabularDigits: true, singleParagraph: true)
        try TextBlock.draw(text, isMarkup: false, style: style, in: Rect(size: size), on: cr, isCancelled: isCancelled)
    }
}
