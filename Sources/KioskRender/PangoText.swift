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

/// The font map a thread's text layouts use. Pango's default Cairo font map is one per thread, because a font map
/// is not safe to share without a lock; each holds its own fonts: HarfBuzz maps every font file it uses again, and
/// fontconfig's sorted font sets are kept per map, about 0.6 MB per thread for the default scene (docs/design.md,
/// "The process"). The process's main thread, which lays text out for the main loop and must never wait, keeps its
/// own. Every other thread (the render workers, one per processor) shares one map under a lock held from a layout's
/// creation to its release, so that text renders on workers take turns while other renders do not.
enum PangoFontMaps {
    /// The map the threads other than the main thread share; created when first used.
    private static let shared = SendableFontMap(pango_cairo_font_map_new().map { OpaquePointer($0) })
    private static let lock = RecursiveMutex()

    /// Whether this is the process's main thread (its thread id is the process id).
    static var onMainThread: Bool { kiosk_gettid() == getpid() }

    /// A layout for `context` on this thread's map; `locked` tells whether it holds the shared map's lock.
    static func makeLayout(for context: OpaquePointer) -> (layout: OpaquePointer?, locked: Bool) {
        if onMainThread { return (pango_cairo_create_layout(context), false) }
        lock.lock()
        guard let map = shared.handle,
              let pangoContext = pango_font_map_create_context(UnsafeMutablePointer<PangoFontMap>(map)) else {
            lock.unlock()
            return (nil, false)
        }
        pango_cairo_update_context(context, pangoContext)
        let layout = pango_layout_new(pangoContext)
        g_object_unref(UnsafeMutableRawPointer(pangoContext))  // the layout keeps its own reference
        if layout == nil { lock.unlock() }
        return (layout, layout != nil)
    }

    static func release(locked: Bool) {
        if locked { lock.unlock() }
    }

    /// Whether a thread holds the shared map now (for tests; the main thread never takes its lock).
    static var sharedMapIsBusy: Bool {
        guard lock.tryLock() else { return true }
        lock.unlock()
        return false
    }

    /// The shared map, created once and never freed; used only under the lock.
    private struct SendableFontMap: @unchecked Sendable {
        let handle: OpaquePointer?
        init(_ handle: OpaquePointer?) { self.handle = handle }
    }
}

/// A pthread mutex one thread may take again while holding it: a text layout may be made while another is open.
final class RecursiveMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }
    func unlock() { pthread_mutex_unlock(mutex) }
}

/// The single owner of a PangoLayout bound to one Cairo context. Lives inside one draw call on the thread doing the
/// drawing, and must not move to another thread: its font map is that thread's (`PangoFontMaps`), and on a render
/// worker it holds the shared map's lock until it is released.
struct TextLayout: ~Copyable {
    let handle: OpaquePointer
    private let context: OpaquePointer
    private let locked: Bool

    init(context: OpaquePointer) throws {
        let made = PangoFontMaps.makeLayout(for: context)
        guard let handle = made.layout else {
            throw RenderError("text layout: pango_cairo_create_layout failed")
        }
        self.handle = handle
        self.context = context
        locked = made.locked
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(handle))
        PangoFontMaps.release(locked: locked)
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
