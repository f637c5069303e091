/// The output's overlay planes, as the layer engine sees them: layers that may be scanned out directly (a video, a
/// layer marked `prefersOverlayPlane`) are offered at each composition, and those the planes take are left out of
/// the CPU composition. The DRM side (`DRMOverlayPlanes`) keeps a dumb buffer pair per plane, checks the layout with
/// a TEST_ONLY atomic commit and copies the pixels in when it adds the planes to the next page flip.
///
/// Main thread, like the engine that asks it.
public protocol OverlayPlanes: AnyObject {
    /// The layout wanted from the next present on: `candidates`, back to front, each of which nothing in the scene
    /// overlaps. Returns, per candidate, nil when a plane takes it, or why not (`no free plane`, `test-only refused:
    /// EINVAL`, `legacy commits`). A plane whose layer is no longer offered is released with the next present; an
    /// empty list releases them all. Must not block (a TEST_ONLY commit is a quick ioctl).
    func assign(_ candidates: [OverlayCandidate]) -> [String?]

    /// Whether a candidate may reach past the screen's edge: the planes show only its part on the screen (a page
    /// sliding in or out). False: only candidates inside the screen are offered.
    var cropsAtScreenEdge: Bool { get }
}

extension OverlayPlanes {
    public var cropsAtScreenEdge: Bool { false }
}

extension Rect {
    /// A plane showing a buffer of `bufferSize` stretched over this scene rectangle, cut to `screen`: the source
    /// rectangle in the buffer (16.16 fixed point, as SRC_X, SRC_Y, SRC_W and SRC_H take it) and the part of the
    /// screen it lands on (CRTC_X, CRTC_Y, CRTC_W, CRTC_H). Nil when nothing of it is on the screen.
    public func planeCrop(bufferSize: Size, screen: Rect) -> (source: (x: UInt64, y: UInt64, width: UInt64, height: UInt64), onScreen: Rect)? {
        let visible = intersection(screen)
        guard !visible.isEmpty, width > 0, height > 0 else { return nil }
        func fixed(_ offset: Int, _ buffer: Int, _ frame: Int) -> UInt64 { UInt64(offset * buffer) << 16 / UInt64(frame) }
        return ((fixed(visible.x - x, bufferSize.width, width), fixed(visible.y - y, bufferSize.height, height),
                 fixed(visible.width, bufferSize.width, width), fixed(visible.height, bufferSize.height, height)), visible)
    }
}

/// A layer offered to an overlay plane: its finished pixels (premultiplied ARGB32, immutable once published) and
/// where they land, in scene pixels. A value; the surface is shared, never written.
public struct OverlayCandidate {
    public let id: ObjectIdentifier
    public let name: String
    public let surface: LayerSurface
    public let frame: Rect

    public init(id: ObjectIdentifier, name: String, surface: LayerSurface, frame: Rect) {
        self.id = id; self.name = name; self.surface = surface; self.frame = frame
    }
}

/// How one plane-eligible layer reached the screen at the last composition, as `stats` reports it.
public struct LayerPathReport: Codable, Sendable, Equatable {
    public enum Path: String, Codable, Sendable { case plane, composited }

    public var layer: String
    public var path: Path
    /// Why it was composited; nil on a plane.
    public var reason: String?

    public init(layer: String, path: Path, reason: String? = nil) {
        self.layer = layer; self.path = path; self.reason = reason
    }
}

extension LayerSurface {
    /// Copies the pixels, row by row, into a plane's framebuffer at `base` (`stride` bytes per row, `size` pixels;
    /// ARGB8888, which is premultiplied ARGB32 as it scans out), clipped to the smaller of the two: what an overlay
    /// plane costs the CPU each time its layer shows a new frame. Returns the bytes copied.
    @discardableResult
    public func copyPixels(into base: UnsafeMutableRawPointer, stride: Int, size: Size) -> Int {
        let row = min(self.size.width, size.width) * 4, rows = min(self.size.height, size.height)
        for y in 0..<rows {
            (base + y * stride).copyMemory(from: bytes + y * self.stride, byteCount: row)
        }
        return row * rows
    }
}
