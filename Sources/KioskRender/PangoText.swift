import CCairo
import CPango
import KioskCore

/// The single owner of a PangoFontDescription. Lives inside one draw call on the thread doing the drawing.
struct FontDescription: ~Copyable {
    let handle: OpaquePointer

    /// `description` in Pango's string form ("Sans Bold"); the size is absolute, in device pixels, so text scales
    /// with the mode rather than with a DPI the kiosk does not know.
    init(_ description: String, pixelSize: Double) throws {
        guard let handle = pango_font_description_from_string(description) else {
            throw RenderError("font \"\(description)\": pango_font_description_from_string failed")
        }
        pango_font_description_set_absolute_size(handle, pixelSize * Double(PANGO_SCALE))
        self.handle = handle
    }

    deinit { pango_font_description_free(handle) }
}

/// The single owner of a PangoLayout bound to one Cairo context. Lives inside one draw call on the thread doing the
/// drawing: Pango's Cairo font map is per thread, so a layout must not move to another thread.
struct TextLayout: ~Copyable {
    let handle: OpaquePointer
    private let context: OpaquePointer

    init(context: OpaquePointer) throws {
        guard let handle = pango_cairo_create_layout(context) else {
            throw RenderError("text layout: pango_cairo_create_layout failed")
        }
        self.handle = handle
        self.context = context
    }

    deinit { g_object_unref(UnsafeMutableRawPointer(handle)) }

    func setText(_ text: String) {
        pango_layout_set_text(handle, text, -1)
    }

    func setFont(_ font: borrowing FontDescription) {
        // The layout copies the description, so `font` may be freed afterwards.
        pango_layout_set_font_description(handle, font.handle)
    }

    /// Asks for tabular (equal-width) digits where the font has them, so a ticking clock does not shift sideways.
    func useTabularDigits() {
        guard let attributes = pango_attr_list_new() else { return }
        if let tnum = pango_attr_font_features_new("tnum") {
            pango_attr_list_insert(attributes, tnum)  // the list takes ownership of the attribute
        }
        pango_layout_set_attributes(handle, attributes)  // the layout takes its own reference
        pango_attr_list_unref(attributes)
    }

    /// The logical extents in pixels: the box the text occupies, including line spacing.
    var logicalExtents: PangoRectangle {
        var logical = PangoRectangle()
        pango_layout_get_pixel_extents(handle, nil, &logical)
        return logical
    }

    /// Draws the layout with its logical box's top-left corner at (`x`, `y`).
    func show(atX x: Double, y: Double, color: Color) {
        let logical = logicalExtents
        cairo_save(context)
        cairo_set_source_rgba(context, color.red, color.green, color.blue, color.alpha)
        cairo_move_to(context, x - Double(logical.x), y - Double(logical.y))
        pango_cairo_show_layout(context, handle)
        cairo_restore(context)
    }
}

/// How a line of text sits horizontally in its band.
enum TextAlignment {
    case leading(inset: Int)
    case center
}

/// Draws one line of `text` vertically centred in `band`. When `fitWidth` is given and the text is wider, the font
/// shrinks until it fits, so a long string never runs off a narrow (portrait) mode.
func drawText(
    _ text: String, font: String, pixelSize: Double, color: Color, in band: Rect,
    alignment: TextAlignment, fitWidth: Int? = nil, tabularDigits: Bool = false, on context: OpaquePointer
) throws {
    let layout = try TextLayout(context: context)
    if tabularDigits { layout.useTabularDigits() }
    layout.setText(text)
    do {
        let description = try FontDescription(font, pixelSize: pixelSize)
        layout.setFont(description)
    }
    var extents = layout.logicalExtents
    if let fitWidth, fitWidth > 0, Int(extents.width) > fitWidth {
        let scaled = pixelSize * Double(fitWidth) / Double(extents.width)
        let description = try FontDescription(font, pixelSize: max(scaled.rounded(.down), 1))
        layout.setFont(description)
        extents = layout.logicalExtents
    }
    let x: Int
    switch alignment {
    case .leading(let inset): x = band.x + inset
    case .center: x = band.x + (band.width - Int(extents.width)) / 2
    }
    let y = band.y + (band.height - Int(extents.height)) / 2
    layout.show(atX: Double(x), y: Double(y), color: color)
}
