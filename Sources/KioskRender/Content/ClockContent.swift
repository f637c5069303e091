#if canImport(Glibc)
import Glibc
#endif
import KioskCore

/// A clock face: one line of text with tabular digits, vertically centred. The caller formats the time (on the main
/// thread, when its once-a-second timer fires) and passes the result in, so drawing never reads the clock and the
/// same value always draws the same pixels. A plain `Sendable` value.
public struct ClockContent: LayerContent, Hashable {
    public enum TimeZone: Hashable, Sendable {
        /// The process's local time (the TZ environment variable, else /etc/localtime).
        case local
        case utc
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

    /// strftime(3) of `time` in `timeZone`; empty when the time cannot be converted or the result is over 255 bytes.
    public static func format(time: Int, format: String, timeZone: TimeZone = .local) -> String {
        var seconds = time_t(time)
        var broken = tm()
        let converted = switch timeZone {
        case .local: localtime_r(&seconds, &broken)
        case .utc: gmtime_r(&seconds, &broken)
        }
        guard converted != nil else { return "" }
        var buffer = [CChar](repeating: 0, count: 256)
        let length = strftime(&buffer, buffer.count, format, &broken)
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var kind: String { "clock" }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        let style = TextStyle(font: font, color: color, alignment: alignment, ellipsizes: true,
                              centersVertically: true, tabularDigits: true, singleParagraph: true)
        try LayerCanvas.draw(into: surface, what: "clock content \(quotedPrefix(text))") { cr in
            try TextBlock.draw(text, isMarkup: false, style: style, in: Rect(size: surface.size), on: cr,
                               isCancelled: isCancelled)
        }
    }
}
