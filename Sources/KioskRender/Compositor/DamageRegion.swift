import CCairo
import KioskCore

/// The single owner of a `cairo_region_t`: a set of integer rectangles whose union and intersection pixman keeps as
/// non-overlapping y-x bands, so a pixel is never copied twice. Lives on the thread that created it (the
/// compositor's, i.e. the main thread); a region is not thread-safe.
final class DamageRegion {
    let handle: OpaquePointer

    init() {
        handle = cairo_region_create()!
        Self.check(cairo_region_status(handle), "cairo_region_create")
    }

    deinit { cairo_region_destroy(handle) }

    var isEmpty: Bool { cairo_region_is_empty(handle) != 0 }

    var rectangleCount: Int { Int(cairo_region_num_rectangles(handle)) }

    /// The smallest rectangle holding the whole region (0x0 when empty).
    var extents: Rect {
        var box = cairo_rectangle_int_t()
        cairo_region_get_extents(handle, &box)
        return Rect(box)
    }

    /// The region's rectangles: disjoint, sorted top to bottom, then left to right.
    var rects: [Rect] {
        let count = cairo_region_num_rectangles(handle)
        var result: [Rect] = []
        result.reserveCapacity(Int(count))
        var box = cairo_rectangle_int_t()
        for i in 0..<count {
            cairo_region_get_rectangle(handle, i, &box)
            result.append(Rect(box))
        }
        return result
    }

    /// Calls `body` with each rectangle, without building an array.
    func forEachRect(_ body: (Rect) -> Void) {
        var box = cairo_rectangle_int_t()
        for i in 0..<cairo_region_num_rectangles(handle) {
            cairo_region_get_rectangle(handle, i, &box)
            body(Rect(box))
        }
    }

    func add(_ rect: Rect) {
        guard !rect.isEmpty else { return }
        var box = cairo_rectangle_int_t(rect)
        Self.check(cairo_region_union_rectangle(handle, &box), "cairo_region_union_rectangle \(rect)")
    }

    func add(_ other: DamageRegion) {
        Self.check(cairo_region_union(handle, other.handle), "cairo_region_union")
    }

    func intersect(_ rect: Rect) {
        var box = cairo_rectangle_int_t(rect.isEmpty ? Rect(x: 0, y: 0, width: 0, height: 0) : rect)
        Self.check(cairo_region_intersect_rectangle(handle, &box), "cairo_region_intersect_rectangle \(rect)")
    }

    func subtract(_ rect: Rect) {
        guard !rect.isEmpty else { return }
        var box = cairo_rectangle_int_t(rect)
        Self.check(cairo_region_subtract_rectangle(handle, &box), "cairo_region_subtract_rectangle \(rect)")
    }

    func removeAll() {
        intersect(Rect(x: 0, y: 0, width: 0, height: 0))
    }

    /// True when some pixel of `rect` is in the region.
    func intersects(_ rect: Rect) -> Bool {
        guard !rect.isEmpty else { return false }
        var box = cairo_rectangle_int_t(rect)
        return cairo_region_contains_rectangle(handle, &box) != CAIRO_REGION_OVERLAP_OUT
    }

    /// Region operations fail only when pixman cannot allocate; the region is then unusable and the damage it held
    /// is lost, so there is no way to go on drawing correct frames.
    private static func check(_ status: cairo_status_t, _ what: String) {
        precondition(status == CAIRO_STATUS_SUCCESS, "damage region: \(what) failed: \(cairoStatusString(status))")
    }
}

@available(*, unavailable, message: "a cairo_region_t belongs to one thread")
extension DamageRegion: Sendable {}

extension Rect {
    init(_ box: cairo_rectangle_int_t) {
        self.init(x: Int(box.x), y: Int(box.y), width: Int(box.width), height: Int(box.height))
    }
}

extension cairo_rectangle_int_t {
    /// Coordinates beyond Int32 are clamped: anything that far out lies off every screen anyway.
    init(_ rect: Rect) {
        self.init(x: Int32(clamping: rect.x), y: Int32(clamping: rect.y),
                  width: Int32(clamping: rect.width), height: Int32(clamping: rect.height))
    }
}
