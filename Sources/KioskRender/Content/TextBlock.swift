import CCairo
import CPango
import KioskCore

/// How a block of text is set: everything `TextContent`, clocks, tickers and the FPS overlay share.
/// A plain value.
struct TextStyle: Hashable, Sendable {
    var font: String
    var color: Color
    var alignment: TextContent.Alignment = .left
    /// Break lines at word boundaries to fit the width.
    var wraps = false
    /// Shorten what does not fit with "…" at the end.
    var ellipsizes = false
    var maxLines: Int?
    var centersVertically = false
    /// Equal-width digits where the font has them, so changing numbers do not shift sideways.
    var tabularDigits = false
    /// Newlines are drawn as glyphs instead of starting paragraphs: a ticker is one line.
    var singleParagraph = false
}

/// Text laid out and drawn with Pango on the calling thread. Every Pango object lives inside one call: Pango's Cairo
/// font map is per thread, so a layout made on a render worker stays there.
enum TextBlock {
    /// Font sizes in descriptions are read at 72 dpi, so "Sans 24" is 24 pixels tall on every panel: a kiosk knows
    /// its mode, not its panel's physical DPI.
    static let resolution = 72.0
    /// The size used when a font description names none.
    static let defaultPixelSize = 16.0

    /// Lays `text` out for a box `width` pixels wide and draws it into `rect` on `cr`. Returns without drawing when
    /// `isCancelled` turns true after layout.
    static func draw(
        _ text: String, isMarkup: Bool, style: TextStyle, in rect: Rect, on cr: OpaquePointer,
        isCancelled: () -> Bool
    ) throws {
        let layout = try makeLayout(text, isMarkup: isMarkup, style: style, width: rect.width, height: rect.height, on: cr)
        let handle = layout.handle
        var logical = PangoRectangle()
        pango_layout_get_pixel_extents(handle, nil, &logical)
        let visibleHeight = visibleHeight(of: handle, logicalHeight: Int(logical.height), maxLines: style.maxLines)
        guard !isCancelled() else { return }

        // With a width set Pango aligns each line inside it; without one the block is placed here.
        var x = Double(rect.x)
        if pango_layout_get_width(handle) < 0 {
            let slack = Double(rect.width - Int(logical.width))
            switch style.alignment {
            case .left: x -= Double(logical.x)
            case .center: x += slack / 2 - Double(logical.x)
            case .right: x += slack - Double(logical.x)
            }
        }
        var y = Double(rect.y) - Double(logical.y)
        if style.centersVertically { y += Double(rect.height - visibleHeight) / 2 }

        cairo_save(cr)
        // Lines past maxLines that Pango could not ellipsize away are cut off here.
        cairo_rectangle(cr, Double(rect.x), max(Double(rect.y), y + Double(logical.y)),
                        Double(rect.width), Double(min(visibleHeight, rect.height)))
        cairo_clip(cr)
        setSource(cr, style.color)
        cairo_move_to(cr, x, y)
        pango_cairo_show_layout(cr, layout.handle)
        cairo_restore(cr)
    }

    /// The pixel size of `text` set in one unbounded line (or paragraphs), measured on the calling thread.
    static func naturalSize(_ text: String, isMarkup: Bool, style: TextStyle) throws -> Size {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1)!
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        let status = cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RenderError("text measurement: cairo_create failed: \(cairoStatusString(status))")
        }
        var unbounded = style
        unbounded.wraps = false
        unbounded.ellipsizes = false
        let layout = try makeLayout(text, isMarkup: isMarkup, style: unbounded, width: nil, height: nil, on: cr)
        var logical = PangoRectangle()
        pango_layout_get_pixel_extents(layout.handle, nil, &logical)
        return Size(width: Int(logical.width), height: Int(logical.height))
    }

    private static func makeLayout(
        _ text: String, isMarkup: Bool, style: TextStyle, width: Int?, height: Int?, on cr: OpaquePointer
    ) throws -> TextLayout {
        let layout = try TextLayout(context: cr)
        let handle = layout.handle
        pango_cairo_context_set_resolution(pango_layout_get_context(handle), resolution)
        pango_layout_context_changed(handle)

        let font = try ParsedFontDescription(style.font)
        pango_layout_set_font_description(handle, font.handle)  // the layout keeps a copy

        var attributes: OpaquePointer?
        if isMarkup {
            let parsed = try parseMarkup(text)
            pango_layout_set_text(handle, parsed.text, -1)
            attributes = parsed.attributes
        } else {
            pango_layout_set_text(handle, text, -1)
        }
        if style.tabularDigits {
            if attributes == nil { attributes = pango_attr_list_new() }
            if let attributes, let tnum = pango_attr_font_features_new("tnum") {
                pango_attr_list_insert(attributes, tnum)  // the list takes ownership of the attribute
            }
        }
        if let attributes {
            pango_layout_set_attributes(handle, attributes)  // the layout takes its own reference
            pango_attr_list_unref(attributes)
        }

        pango_layout_set_single_paragraph_mode(handle, style.singleParagraph ? 1 : 0)
        let alignment = switch style.alignment {
        case .left: PANGO_ALIGN_LEFT
        case .center: PANGO_ALIGN_CENTER
        case .right: PANGO_ALIGN_RIGHT
        }
        pango_layout_set_alignment(handle, alignment)
        if let width, style.wraps || style.ellipsizes {
            pango_layout_set_width(handle, Int32(clamping: width) &* PANGO_SCALE)
            pango_layout_set_wrap(handle, PANGO_WRAP_WORD)
        }
        if style.ellipsizes {
            pango_layout_set_ellipsize(handle, PANGO_ELLIPSIZE_END)
            if style.wraps {
                // A negative height is a line count; a positive one is the box's height in Pango units.
                if let maxLines = style.maxLines {
                    pango_layout_set_height(handle, -Int32(clamping: max(maxLines, 1)))
                } else if let height {
                    pango_layout_set_height(handle, Int32(clamping: height) &* PANGO_SCALE)
                }
            }
        }
        return layout
    }

    /// The height of the first `maxLines` lines, or of the whole layout.
    private static func visibleHeight(of layout: OpaquePointer, logicalHeight: Int, maxLines: Int?) -> Int {
        guard let maxLines, maxLines > 0, Int(pango_layout_get_line_count(layout)) > maxLines,
              let iterator = pango_layout_get_iter(layout) else { return logicalHeight }
        defer { pango_layout_iter_free(iterator) }
        for _ in 1..<maxLines { _ = pango_layout_iter_next_line(iterator) }
        var top: Int32 = 0, bottom: Int32 = 0
        pango_layout_iter_get_line_yrange(iterator, &top, &bottom)
        return Int((bottom + PANGO_SCALE - 1) / PANGO_SCALE)
    }

    /// Pango markup split into plain text and an attribute list (owned by the caller). Invalid markup throws with
    /// GLib's message rather than drawing nothing, as `pango_layout_set_markup` would.
    private static func parseMarkup(_ markup: String) throws -> (text: String, attributes: OpaquePointer?) {
        var attributes: OpaquePointer?
        var plain: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<GError>?
        guard pango_parse_markup(markup, -1, 0, &attributes, &plain, nil, &error) != 0, let plain else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            if let error { g_error_free(error) }
            if let attributes { pango_attr_list_unref(attributes) }
            throw RenderError("text \(quotedPrefix(markup)): invalid markup: \(message)")
        }
        defer { g_free(plain) }
        return (String(cString: plain), attributes)
    }
}

/// The single owner of a PangoFontDescription parsed from a string such as "Sans Bold 24". Lives inside one draw
/// call on the drawing thread.
struct ParsedFontDescription: ~Copyable {
    let handle: OpaquePointer

    init(_ description: String) throws {
        guard let handle = pango_font_description_from_string(description) else {
            throw RenderError("font \"\(description)\": pango_font_description_from_string failed")
        }
        if pango_font_description_get_set_fields(handle).rawValue & PANGO_FONT_MASK_SIZE.rawValue == 0 {
            pango_font_description_set_size(handle, Int32(TextBlock.defaultPixelSize) * PANGO_SCALE)
        }
        self.handle = handle
    }

    deinit { pango_font_description_free(handle) }
}

/// The first characters of `text` in quotes, for error messages.
func quotedPrefix(_ text: String, limit: Int = 40) -> String {
    text.count <= limit ? "\"\(text)\"" : "\"\(text.prefix(limit))…\""
}
