import CCairo
import CKioskSys
import CPango
import Glibc
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

/// The Pango font maps text layouts use. A font map is not safe to use from two threads at once, and each holds its
/// own fonts: HarfBuzz maps every font file it uses again, and fontconfig's sorted font sets are kept per map, about
/// 0.6 MB per map for the default scene (docs/design.md, "The process"). So maps are lent: a thread that opens a
/// layout takes an idle map (the one returned last, whose fonts are warm) or makes a new one when every map is lent,
/// keeps it while it has a layout open, and gives it back when its last layout is released. The lock guards only
/// the lending; no thread waits for another's text render, and there are never more maps than threads that laid
/// text out at the same moment (at most the render workers and the main thread).
public enum PangoFontMaps {
    private struct Lent {
        var map: FontMap
        /// Layouts open on the thread: one may be made while another is open.
        var depth: Int
    }

    private struct State {
        /// Maps no thread holds, the one returned last at the end.
        var idle: [FontMap] = []
        var lent: [pid_t: Lent] = [:]
        var made = 0
        /// Font files registered with `addFontFiles`, in order.
        var fontFiles: [String] = []
        /// Bumped when fonts are added: a map of an older generation holds font sets without them, and is freed
        /// when given back instead of lent again.
        var generation = 0
    }

    private static let state = Lock(State())

    /// A layout for `context` on a map lent to this thread until `release()`; nil when Pango fails.
    static func makeLayout(for context: OpaquePointer) -> OpaquePointer? {
        guard let map = borrow() else { return nil }
        guard let pangoContext = pango_font_map_create_context(UnsafeMutablePointer<PangoFontMap>(map.handle)) else {
            release()
            return nil
        }
        pango_cairo_update_context(context, pangoContext)
        let layout = pango_layout_new(pangoContext)
        g_object_unref(UnsafeMutableRawPointer(pangoContext))  // the layout keeps its own reference
        if layout == nil { release() }
        return layout
    }

    private static func borrow() -> FontMap? {
        let thread = kiosk_gettid()
        return state.withLock { state -> FontMap? in
            if var lent = state.lent[thread] {
                lent.depth += 1
                state.lent[thread] = lent
                return lent.map
            }
            let map: FontMap
            if let idle = state.idle.popLast(), idle.generation == state.generation {
                map = idle
            } else {
                // A new map holds no fonts yet; it loads them as layouts on it need them.
                guard let handle = pango_cairo_font_map_new() else { return nil }
                map = FontMap(handle: OpaquePointer(handle), generation: state.generation)
                state.made += 1
            }
            state.lent[thread] = Lent(map: map, depth: 1)
            return map
        }
    }

    /// Called as a layout made by `makeLayout` is freed, on the thread that made it.
    static func release() {
        let thread = kiosk_gettid()
        state.withLock { state in
            guard var lent = state.lent[thread] else { return }
            lent.depth -= 1
            if lent.depth > 0 {
                state.lent[thread] = lent
            } else {
                state.lent[thread] = nil
                if lent.map.generation == state.generation {
                    state.idle.append(lent.map)
                } else {
                    g_object_unref(UnsafeMutableRawPointer(lent.map.handle))
                }
            }
        }
    }

    /// Makes the fonts in `files` (TrueType, OpenType, WOFF: what FreeType reads) available to text by their family
    /// names, besides the system's: a fontconfig configuration with the system's fonts and every file registered so
    /// far is made and made current, and every font map is replaced (idle ones at once, lent ones when given back),
    /// so layouts made from now on find the new families. Fontconfig is the one pango already loaded, its functions
    /// looked up with dlsym (kioskd links no fontconfig of its own). Files registered before are not read again.
    /// Any thread; it reads the system's font folders (fontconfig's caches): off the main loop.
    ///
    /// - Returns: whether anything changed.
    /// - Throws: a file fontconfig cannot read as a font, naming it; the registry is then as before.
    @discardableResult
    public static func addFontFiles(_ files: [String]) throws -> Bool {
        try fontRegistration.withLock { _ in
            // A file gone since (the old version of a font by URL, replaced in the asset cache) is let go.
            let known = state.withLock { $0.fontFiles }.filter { access($0, R_OK) == 0 }
            let new = files.filter { !known.contains($0) }
            guard !new.isEmpty else { return false }
            let fc = try Fontconfig.shared()
            guard let config = fc.initLoadConfigAndFonts() else { throw RenderError("fontconfig: FcInitLoadConfigAndFonts failed") }
            for file in known + new {
                guard fc.appFontAddFile(config, file) != 0 else {
                    fc.destroy(config)
                    throw RenderError("font \(file): fontconfig cannot read it as a font")
                }
            }
            _ = fc.setCurrent(config)
            fc.destroy(config)  // the current configuration holds its own reference
            state.withLock { state in
                state.fontFiles = known + new
                state.generation += 1
                for map in state.idle { g_object_unref(UnsafeMutableRawPointer(map.handle)) }
                state.idle = []
            }
            return true
        }
    }

    /// Font files registered so far.
    public static var fontFiles: [String] { state.withLock { $0.fontFiles } }

    /// One registration at a time.
    private static let fontRegistration = Lock(())

    /// The fontconfig functions `addFontFiles` calls, from the library pango loaded.
    private struct Fontconfig: @unchecked Sendable {
        let initLoadConfigAndFonts: @convention(c) () -> OpaquePointer?
        let appFontAddFile: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
        let setCurrent: @convention(c) (OpaquePointer?) -> Int32
        let destroy: @convention(c) (OpaquePointer?) -> Void

        static func shared() throws -> Fontconfig {
            func symbol<T>(_ name: String, _ type: T.Type) throws -> T {
                // RTLD_DEFAULT: the libraries already loaded (libpangoft2 brings libfontconfig).
                guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                    throw RenderError("fontconfig: \(name) not found among the loaded libraries")
                }
                return unsafeBitCast(pointer, to: type)
            }
            return Fontconfig(initLoadConfigAndFonts: try symbol("FcInitLoadConfigAndFonts", (@convention(c) () -> OpaquePointer?).self),
                              appFontAddFile: try symbol("FcConfigAppFontAddFile", (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32).self),
                              setCurrent: try symbol("FcConfigSetCurrent", (@convention(c) (OpaquePointer?) -> Int32).self),
                              destroy: try symbol("FcConfigDestroy", (@convention(c) (OpaquePointer?) -> Void).self))
        }
    }

    /// Maps made so far, and how many are lent now (for tests and diagnostics).
    static var counts: (made: Int, lent: Int) { state.withLock { ($0.made, $0.lent.count) } }

    /// Whether this thread holds a map now (for tests).
    static var thisThreadHoldsAMap: Bool {
        let thread = kiosk_gettid()
        return state.withLock { $0.lent[thread] != nil }
    }

    /// A font map, freed only once fonts were added after it was made; used by one thread at a time, the one it is
    /// lent to.
    private struct FontMap: @unchecked Sendable {
        let handle: OpaquePointer
        /// `State.generation` when it was made.
        let generation: Int
    }
}

/// The single owner of a PangoLayout bound to one Cairo context. Lives inside one draw call on the thread doing the
/// drawing, and must not move to another thread: its font map is lent to that thread until the layout is released
/// (`PangoFontMaps`).
struct TextLayout: ~Copyable {
    let handle: OpaquePointer
    private let context: OpaquePointer

    init(context: OpaquePointer) throws {
        guard let handle = PangoFontMaps.makeLayout(for: context) else {
            throw RenderError("text layout: Pango could not make a layout (pango_layout_new)")
        }
        self.handle = handle
        self.context = context
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(handle))
        PangoFontMaps.release()
    }

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
