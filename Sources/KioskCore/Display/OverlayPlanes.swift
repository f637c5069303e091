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
