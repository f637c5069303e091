import CCairo
import CPango
import KioskCore

/// How a block of text is set: everything `TextContent`, clocks, tickers, buttons and the fps widget share.
/// A plain value.
struct TextStyle: Hashable, Sendable {
    var font: String
    var color: Color
    var alignment: TextContent.Alignment = .left
    /// How lines break to fit the width; `.none` keeps each paragraph on one line.
    var wrap: TextContent.Wrap = .none
    /// Where what does not fit is shortened with "…".
    var ellipsize: TextContent.Ellipsize = .none
    var maxLines: Int?
    var centersVertically = false
    /// Equal-width digits where the font has them, so changing numbers do not shift sideways.
    var tabularDigits = false
    /// Newlines are drawn as glyphs instead of starting paragraphs: a ticker is one line.
    var singleParagraph = false
    /// Shrink the font until the text fits the box (see `TextContent.shrinksToFit`).
    var shrinksToFit = false
}

/// What Pango made of a block of text, for tests and diagnostics. A plain value.
struct TextLayoutReport: Sendable {
    /// The font size the text was set at, in pixels (smaller than asked for when it was shrunk to fit).
    var pixelSize: Double
    /// The inked pixels' bounding box, in the coordinates of the box the text was drawn into.
    var ink: Rect
    var lineCount: Int
    /// Per line: Pango resolved it right to left.
    var linesAreRightToLeft: [Bool]
    /// Glyph ids in visual order, every run of every line.
    var glyphs: [UInt32]
    /// Glyphs Pango had no font for (drawn as hex boxes).
    var unknownGlyphs: Int
    var isEllipsized: Bool
}

/// Text laid out and drawn with Pango on the calling thread. Every Pango object lives inside one call: a layout's
/// font map is lent to the thread that made it until the layout is released (`PangoFontMaps`), so it stays there.
enum TextBlock {
    /// Font sizes in descriptions are read at 72 dpi, so "Sans 24" is 24 pixels tall on every panel: a kiosk knows
    /// its mode, not its panel's physical DPI.
    static let resolution = 72.0
    /// The size used when a font description names none.
    static let defaultPixelSize = 16.0
    /// `shrinksToFit` goes no smaller than this share of the asked-for size, nor below `minimumShrunkPixelSize`.
    static let minimumShrinkScale = 0.3
    static let minimumShrunkPixelSize = 6.0

    /// Pango marks a glyph it found no font for with this bit (PANGO_GLYPH_UNKNOWN_FLAG, a cast macro Swift cannot
    /// import).
    static let unknownGlyphFlag: UInt32 = 0x1000_0000

    /// Lays `text` out for `rect` and draws it there on `cr`. Returns without drawing when `isCancelled` turns true
    /// during layout.
    static func draw(
        _ text: String, isMarkup: Bool, style: TextStyle, in rect: Rect, on cr: OpaquePointer,
        isCancelled: () -> Bool
    ) throws {
        guard let placed = try place(text, isMarkup: isMarkup, style: style, in: rect, on: cr, isCancelled: isCancelled),
              !isCancelled() else { return }
        cairo_save(cr)
        // Lines past maxLines that Pango could not ellipsize away are cut off here.
        cairo_rectangle(cr, Double(rect.x), max(Double(rect.y), placed.y + Double(placed.logical.y)),
                        Double(rect.width), Double(min(placed.visibleHeight, rect.height)))
        cairo_clip(cr)
        setSource(cr, style.color)
        cairo_move_to(cr, placed.x, placed.y)
        pango_cairo_show_layout(cr, placed.layout.handle)
        cairo_restore(cr)
    }

    /// Lays `text` out exactly as `draw` would in `rect` and reports what Pango made of it, without drawing.
    static func report(_ text: String, isMarkup: Bool, style: TextStyle, in rect: Rect) throws -> TextLayoutReport {
        try withScratchContext(what: "text layout report") { cr in
            let placed = try place(text, isMarkup: isMarkup, style: style, in: rect, on: cr, isCancelled: { false })!
            let handle = placed.layout.handle
            var ink = PangoRectangle()
            pango_layout_get_pixel_extents(handle, &ink, nil)
            var directions: [Bool] = []
            for index in 0..<pango_layout_get_line_count(handle) {
                guard let line = pango_layout_get_line_readonly(handle, index) else { continue }
                directions.append(pango_layout_line_get_resolved_direction(line) == PANGO_DIRECTION_RTL)
            }
            var glyphs: [UInt32] = []
            if let iterator = pango_layout_get_iter(handle) {
                defer { pango_layout_iter_free(iterator) }
                repeat {
                    // A nil run is the end of a line.
                    guard let run = pango_layout_iter_get_run_readonly(iterator), let string = run.pointee.glyphs else {
                        continue
                    }
                    for index in 0..<Int(string.pointee.num_glyphs) {
                        glyphs.append(string.pointee.glyphs[index].glyph)
                    }
                } while pango_layout_iter_next_run(iterator) != 0
            }
            return TextLayoutReport(
                pixelSize: placed.pixelSize,
                ink: Rect(x: Int((placed.x + Double(ink.x)).rounded(.down)), y: Int((placed.y + Double(ink.y)).rounded(.down)),
                          width: Int(ink.width), height: Int(ink.height)),
                lineCount: Int(pango_layout_get_line_count(handle)), linesAreRightToLeft: directions, glyphs: glyphs,
                unknownGlyphs: glyphs.filter { $0 & unknownGlyphFlag != 0 }.count,
                isEllipsized: pango_layout_is_ellipsized(handle) != 0)
        }
    }

    /// The pixel size of `text` set in one unbounded line (or paragraphs), measured on the calling thread.
    static func naturalSize(_ text: String, isMarkup: Bool, style: TextStyle) throws -> Size {
        var unbounded = style
        unbounded.wrap = .none
        unbounded.ellipsize = .none
        unbounded.shrinksToFit = false
        return try measure(text, isMarkup: isMarkup, style: unbounded, maxWidth: nil)
    }

    /// The logical size of `text` laid out `maxWidth` pixels wide (unbounded when nil), rounded up to whole pixels.
    /// Makes its own scratch Cairo context, so any thread may call it.
    static func measure(_ text: String, isMarkup: Bool, style: TextStyle, maxWidth: Int?) throws -> Size {
        try withScratchContext(what: "text measurement") { cr in
            let layout = try makeLayout(text, isMarkup: isMarkup, style: style, font: try ParsedFontDescription(style.font),
                                        width: maxWidth, height: nil, on: cr)
            var logical = PangoRectangle()
            pango_layout_get_extents(layout.handle, nil, &logical)
            func pixels(_ units: Int32) -> Int { Int((Double(units) / Double(PANGO_SCALE)).rounded(.up)) }
            return Size(width: pixels(logical.width), height: pixels(logical.height))
        }
    }

    /// A laid-out block and where its layout's origin goes.
    private struct PlacedText: ~Copyable {
        let layout: TextLayout
        let x: Double
        let y: Double
        let logical: PangoRectangle
        let visibleHeight: Int
        let pixelSize: Double
    }

    /// Lays the text out (shrinking it when asked) and positions it in `rect`. Nil when cancelled.
    private static func place(
        _ text: String, isMarkup: Bool, style: TextStyle, in rect: Rect, on cr: OpaquePointer,
        isCancelled: () -> Bool
    ) throws -> PlacedText? {
        let font = try ParsedFontDescription(style.font)
        let layout = try makeLayout(text, isMarkup: isMarkup, style: style, font: font, width: rect.width,
                                    height: rect.height, on: cr)
        let handle = layout.handle
        let askedSize = Double(pango_font_description_get_size(font.handle))
        var size = askedSize
        if style.shrinksToFit, !fits(handle, in: rect, maxLines: style.maxLines) {
            size = try shrink(handle, font: font, askedSize: askedSize, rect: rect, maxLines: style.maxLines,
                              isCancelled: isCancelled)
        }
        guard !isCancelled() else { return nil }

        var logical = PangoRectangle()
        pango_layout_get_pixel_extents(handle, nil, &logical)
        let visibleHeight = visibleHeight(of: handle, logicalHeight: Int(logical.height), maxLines: style.maxLines)
        // With a width set Pango aligns each line inside it; without one the block is placed here, mirrored for a
        // right-to-left paragraph as Pango mirrors it.
        var x = Double(rect.x)
        if pango_layout_get_width(handle) < 0 {
            let slack = Double(rect.width - Int(logical.width))
            let isRightToLeft = pango_layout_get_line_readonly(handle, 0)
                .map { pango_layout_line_get_resolved_direction($0) == PANGO_DIRECTION_RTL } ?? false
            switch (style.alignment, isRightToLeft) {
            case (.left, false), (.right, true): x -= Double(logical.x)
            case (.center, _): x += slack / 2 - Double(logical.x)
            case (.right, false), (.left, true): x += slack - Double(logical.x)
            }
        }
        var y = Double(rect.y) - Double(logical.y)
        if style.centersVertically { y += Double(rect.height - visibleHeight) / 2 }
        let isAbsolute = pango_font_description_get_size_is_absolute(font.handle) != 0
        // Description sizes are points read at `resolution` (72 dpi), so points and pixels coincide.
        let pixelSize = size / Double(PANGO_SCALE) * (isAbsolute ? 1 : resolution / 72)
        return PlacedText(layout: layout, x: x, y: y, logical: logical, visibleHeight: visibleHeight,
                          pixelSize: pixelSize)
    }

    /// True when the laid-out text needs no ellipsis, no clipping and no more than `maxLines` lines in `rect`.
    private static func fits(_ layout: OpaquePointer, in rect: Rect, maxLines: Int?) -> Bool {
        var logical = PangoRectangle()
        pango_layout_get_extents(layout, nil, &logical)
        let lines = Int(pango_layout_get_line_count(layout))
        return pango_layout_is_ellipsized(layout) == 0
            && Double(logical.width) <= Double(rect.width) * Double(PANGO_SCALE)
            && Double(logical.height) <= Double(rect.height) * Double(PANGO_SCALE)
            && lines <= (maxLines ?? Int.max)
    }

    /// Sets the largest font size (Pango units, in whole-pixel steps) between the floor and `askedSize` at which the
    /// text fits, or the floor when none does, and returns it. A binary search: a few layouts, not one per pixel.
    private static func shrink(
        _ layout: OpaquePointer, font: borrowing ParsedFontDescription, askedSize: Double, rect: Rect, maxLines: Int?,
        isCancelled: () -> Bool
    ) throws -> Double {
        let isAbsolute = pango_font_description_get_size_is_absolute(font.handle) != 0
        let unitsPerPixel = Double(PANGO_SCALE) * (isAbsolute ? 1 : 72 / resolution)
        let asked = askedSize / unitsPerPixel
        let floor = min(asked, max(asked * minimumShrinkScale, minimumShrunkPixelSize))
        func apply(_ pixels: Double) {
            let units = pixels * unitsPerPixel
            if isAbsolute {
                pango_font_description_set_absolute_size(font.handle, units)
            } else {
                pango_font_description_set_size(font.handle, Int32(units.rounded()))
            }
            pango_layout_set_font_description(layout, font.handle)
        }
        // Whole pixels from floor up to just below the asked size; the asked size is known not to fit.
        var low = Int(floor.rounded(.up)), high = Int(asked.rounded(.up)) - 1
        var best = floor
        while low <= high {
            guard !isCancelled() else { break }
            let middle = (low + high) / 2
            apply(Double(middle))
            if fits(layout, in: rect, maxLines: maxLines) {
                best = Double(middle)
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        apply(best)
        return best * unitsPerPixel
    }

    /// Runs `body` with a context on a 1x1 scratch surface, for layout without drawing.
    private static func withScratchContext<R>(what: String, _ body: (OpaquePointer) throws -> R) throws -> R {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1)!
        defer { cairo_surface_destroy(surface) }
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        let status = cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RenderError("\(what): cairo_create failed: \(cairoStatusString(status))")
        }
        return try body(cr)
    }

    private static func makeLayout(
        _ text: String, isMarkup: Bool, style: TextStyle, font: borrowing ParsedFontDescription, width: Int?,
        height: Int?, on cr: OpaquePointer
    ) throws -> TextLayout {
        let layout = try TextLayout(context: cr)
        let handle = layout.handle
        pango_cairo_context_set_resolution(pango_layout_get_context(handle), resolution)
        pango_layout_context_changed(handle)
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
        if let width, style.wrap != .none || style.ellipsize != .none {
            pango_layout_set_width(handle, Int32(clamping: width) &* PANGO_SCALE)
        }
        let wrap = switch style.wrap {
        case .none, .word: PANGO_WRAP_WORD
        case .char: PANGO_WRAP_CHAR
        case .wordChar: PANGO_WRAP_WORD_CHAR
        }
        pango_layout_set_wrap(handle, wrap)
        let ellipsize = switch style.ellipsize {
        case .none: PANGO_ELLIPSIZE_NONE
        case .start: PANGO_ELLIPSIZE_START
        case .middle: PANGO_ELLIPSIZE_MIDDLE
        case .end: PANGO_ELLIPSIZE_END
        }
        pango_layout_set_ellipsize(handle, ellipsize)
        // An ellipsizing layout without a height keeps each paragraph on one line, which is what `.none` wrapping
        // asks for. With wrapping, a negative height is a line count and a positive one the box's height in Pango
        // units; Pango uses a height only when it ellipsizes.
        if style.ellipsize != .none, style.wrap != .none {
            if let maxLines = style.maxLines {
                pango_layout_set_height(handle, -Int32(clamping: max(maxLines, 1)))
            } else if let height {
                pango_layout_set_height(handle, Int32(clamping: height) &* PANGO_SCALE)
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
