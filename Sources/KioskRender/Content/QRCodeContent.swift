#if canImport(Glibc)
import Glibc
#endif
import CCairo
import CQREncode
import KioskCore

/// A QR code of `text`, encoded with libqrencode (error correction level M, non-alphanumeric characters in 8-bit mode
/// so UTF-8 passes through as is, case-sensitive). Modules are whole-pixel squares of the largest size that fits the
/// symbol and its quiet zone into the layer's shorter side, centred, with antialiasing off so every edge is crisp for
/// a camera. Only the symbol's square (quiet zone included) is painted with `background`; the rest of the layer stays
/// clear. Encoding happens in `draw`, on the render worker. A plain `Sendable` value.
public struct QRCodeContent: CairoDrawnContent, Hashable {
    public var text: String
    /// The dark modules.
    public var foreground: Color
    /// The light modules and the quiet zone.
    public var background: Color
    /// Light modules around the symbol on each side; the standard asks for 4, 2 is enough for most phone scanners.
    public var quietZone: Int

    public init(text: String, foreground: Color = .black, background: Color = .white, quietZone: Int = 2) {
        self.text = text; self.foreground = foreground; self.background = background; self.quietZone = quietZone
    }

    public var kind: String { "qrcode" }

    /// The encoded symbol: `width` x `width` modules, row by row, true = dark. A plain value.
    public struct Symbol: Hashable, Sendable {
        public var version: Int
        public var width: Int
        public var modules: [Bool]

        public func isDark(x: Int, y: Int) -> Bool { modules[y * width + x] }
    }

    /// Encodes `text` as `draw` does. Throws a message naming the text when it is empty, holds a NUL character or is
    /// too long for the largest QR code (version 40, level M: 2331 bytes of 8-bit data).
    public static func encode(_ text: String) throws -> Symbol {
        guard !text.isEmpty else { throw RenderError("qr code \"\": nothing to encode") }
        guard !text.utf8.contains(0) else {
            throw RenderError("qr code \(quotedPrefix(text)): text holds a NUL character, which QR strings cannot carry")
        }
        errno = 0
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
            let reason = switch errno {
            case ERANGE: "text too long for a QR code (\(text.utf8.count) bytes; level M holds at most 2331)"
            case ENOMEM: "out of memory"
            default: "libqrencode failed: \(errnoDescription(errno))"
            }
            throw RenderError("qr code \(quotedPrefix(text)): \(reason)")
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        // Bit 0 of each byte is the module's colour; the other bits say what kind of module it is.
        let modules = (0..<(width * width)).map { code.pointee.data[$0] & 1 == 1 }
        return Symbol(version: Int(code.pointee.version), width: width, modules: modules)
    }

    /// Where `draw` puts the symbol in a layer of `size`: the module size in pixels and the square the symbol and its
    /// quiet zone cover. Nil when even one-pixel modules do not fit.
    public static func placement(symbolWidth: Int, quietZone: Int, in size: Size) -> (moduleSize: Int, square: Rect)? {
        let modules = symbolWidth + 2 * max(quietZone, 0)
        let moduleSize = min(size.width, size.height) / modules
        guard moduleSize > 0 else { return nil }
        let side = modules * moduleSize
        return (moduleSize, Rect(x: (size.width - side) / 2, y: (size.height - side) / 2, width: side, height: side))
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "qr code \(quotedPrefix(text))" }

    /// The dark modules replace what is below them (SOURCE); a translucent foreground would also replace what is
    /// below the layer.
    package var replacesPixelsBelow: Bool { foreground.alpha < 1 }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let symbol = try Self.encode(text)
        guard !isCancelled() else { return }
        let zone = max(quietZone, 0)
        guard let (moduleSize, square) = Self.placement(symbolWidth: symbol.width, quietZone: zone, in: size) else {
            throw RenderError("qr code \(quotedPrefix(text)): layer \(size) is too small for "
                + "\(symbol.width + 2 * zone) modules")
        }
        cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE)
        cairo_rectangle(cr, Double(square.x), Double(square.y), Double(square.width), Double(square.height))
        setSource(cr, background)
        cairo_fill(cr)
        let left = square.x + zone * moduleSize, top = square.y + zone * moduleSize
        for y in 0..<symbol.width {
            for x in 0..<symbol.width where symbol.isDark(x: x, y: y) {
                cairo_rectangle(cr, Double(left + x * moduleSize), Double(top + y * moduleSize),
                                Double(moduleSize), Double(moduleSize))
            }
        }
        // The dark modules replace the background rather than blend with it, so a translucent foreground still
        // reads as its own colour.
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        setSource(cr, foreground)
        cairo_fill(cr)
    }
}
